import Camera
import Testing

@Suite struct ConfigurationTests {
    @Test func defaults() throws {
        let configuration = CameraConfiguration()
        #expect(configuration.width == 1920 && configuration.height == 1080)
        #expect(configuration.framesPerSecond == 15 && configuration.bufferCount == 2)
        #expect(configuration.stallTimeout == .seconds(5))
        try configuration.validate()
    }

    @Test func rotationMustBeAQuarterTurn() throws {
        #expect(try CameraRotation(degrees: 270) == .clockwise270)
        #expect {
            try CameraRotation(degrees: 45)
        } throws: { error in
            let text = (error as? CameraError)?.description ?? ""
            return text.contains("45") && text.contains("0, 90, 180 and 270")
        }
    }

    @Test(arguments: [
        CameraConfiguration(width: 0), CameraConfiguration(framesPerSecond: 0), CameraConfiguration(bufferCount: 1),
        CameraConfiguration(stallTimeout: .zero), CameraConfiguration(frameBufferPoolSize: 0),
        CameraConfiguration(deliveredLongEdge: 8),
        CameraConfiguration(device: ""),
    ])
    func outOfRangeSettingsAreRejected(configuration: CameraConfiguration) {
        #expect(throws: CameraError.self) { try configuration.validate() }
    }
}
