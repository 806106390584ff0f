import CShim
import Controls
import Foundation
import SwiftWingCore
import Testing

@Suite struct KeyShutterDirectoryTests {
    @Test func filesThatAreNotKeyDevicesAreIgnoredAndAMissingDirectoryIsWaitedFor() async throws {
        // A real inotify watch on a scratch directory that does not exist yet; then "event0" appears
        // as a plain file (not an input device): it is opened, found to offer no keys, and closed.
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: parent) }
        let directory = parent.appendingPathComponent("input")
        let shutter = KeyShutter(directory: directory.path)
        try shutter.start { _ in }
        defer { shutter.stop() }
        try await Task.sleep(for: .milliseconds(50))  // the shutter's thread sets its inotify watch
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data([0]).write(to: directory.appendingPathComponent("event0"))
        var waited = 0
        while shutter.examined == 0, waited < 200 {
            try await Task.sleep(for: .milliseconds(10))  // polls the shutter's thread
            waited += 1
        }
        // Seen through the watch on the new directory; the first scan of that directory may see it too
        // when the file appears right after the directory, which examines it twice, harmlessly.
        #expect((1...2).contains(shutter.examined))
        #expect(shutter.devices.isEmpty)  // and let go: it offers no keys (EVIOCGBIT fails on a file)
    }
}
