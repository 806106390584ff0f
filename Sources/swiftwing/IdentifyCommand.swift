import ArgumentParser
import Foundation
import Identify
import SwiftWingCore

extension SwiftWingCommand {
    /// Reads pictures the way the daemon reads a captured frame: the same ``FrameIdentifier``.
    struct IdentifyPictures: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "identify",
            abstract: "Read the barcodes (ISBNs) in JPEG or PNG files and check their sharpness and exposure, offline.",
            discussion: """
                JSON (--json): {"images": [{"file", "barcodes": [{"format", "text"}], "isbns", "sharpness", \
                "exposure": {"mean", "shadows", "highlights"}, "milliseconds"}]}. sharpness is the variance of the \
                Laplacian of the Y plane; exposure.mean is the mean luma (0-255), shadows and highlights the \
                fractions of the frame clipped to black and white; milliseconds is the time the daemon would add \
                to this frame (decoding the file excluded).
                """)

        @Flag(help: "Print stable JSON (see the discussion above).")
        var json = false

        @Argument(help: "JPEG or PNG files.")
        var files: [String]

        func validate() throws {
            if files.isEmpty { throw ValidationError("name at least one JPEG or PNG file") }
        }

        func run() throws {
            let identifier: FrameIdentifier
            do {
                identifier = try FrameIdentifier()
            } catch {
                throw CommandFailure(error.description)
            }
            var images: [IdentifyReport.Image] = []
            var failures: [String] = []
            for file in files {
                do {
                    let frame = try PictureFile.frame(contentsOf: file)
                    let identification = try identifier.identify(frame: frame)
                    images.append(IdentifyReport.Image(file: file, identification))
                    if !json {
                        print(IdentifyReport.text(file: file, identification, thresholds: identifier.thresholds))
                    }
                } catch {
                    failures.append(error.description)
                }
            }
            if json { print(IdentifyReport(images: images).json()) }
            if !failures.isEmpty {
                throw CommandFailure(failures.joined(separator: "\n"))
            }
        }
    }
}

/// The JSON `swiftwing identify --json` prints.
struct IdentifyReport: Codable {
    struct Image: Codable {
        var file: String
        var barcodes: [Barcode]
        var isbns: [String]
        var sharpness: Double
        var exposure: FrameQuality.Exposure
        var milliseconds: Double

        init(file: String, _ identification: Identification) {
            self.file = file
            barcodes = identification.barcodes
            isbns = identification.isbns
            sharpness = rounded(identification.quality.sharpness, places: 1)
            let exposure = identification.quality.exposure
            self.exposure = .init(
                mean: rounded(exposure.mean, places: 1), shadows: rounded(exposure.shadows, places: 4),
                highlights: rounded(exposure.highlights, places: 4))
            milliseconds = rounded(identification.milliseconds, places: 2)
        }
    }

    var images: [Image]

    func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(self)) ?? Data("{}".utf8), as: UTF8.self)
    }

    static func text(file: String, _ identification: Identification, thresholds: QualityThresholds) -> String {
        let quality = identification.quality
        let codes =
            identification.barcodes.isEmpty
            ? "no barcode" : identification.barcodes.map { "\($0.format.rawValue) \($0.text)" }.joined(separator: ", ")
        let isbns = identification.isbns.isEmpty ? "" : "  ISBN \(identification.isbns.joined(separator: ", "))"
        return "\(file): \(codes)\(isbns)\n  \(identification.verdict.rawValue): sharpness "
            + String(
                format: "%.1f (min %.0f), mean level %.1f, clipped shadows %.1f%%, highlights %.1f%%, %.1f ms",
                quality.sharpness, thresholds.minimumSharpness, quality.exposure.mean,
                quality.exposure.shadows * 100, quality.exposure.highlights * 100, identification.milliseconds)
    }
}

private func rounded(_ value: Double, places: Int) -> Double {
    let scale = pow(10, Double(places))
    return (value * scale).rounded() / scale
}
