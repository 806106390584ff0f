import Controls
import Foundation
import Logging
import SwiftWingCore
import Synchronization
import Testing

@testable import Appliance

@Suite struct JournalFieldTests {
    @Test func metadataKeysBecomeValidJournalFieldNames() {
        #expect(JournalLogHandler.journalFieldName("scan_id") == "SCAN_ID")
        #expect(JournalLogHandler.journalFieldName("press-to-frame.ms") == "PRESS_TO_FRAME_MS")
        #expect(JournalLogHandler.journalFieldName("_private") == "PRIVATE")
        #expect(JournalLogHandler.journalFieldName("9lives") == "F9LIVES")
        #expect(JournalLogHandler.syslogPriority(.error) == 3)
    }
}

@Suite struct ScanJournalFieldTests {
    final class Entries: Sendable {
        let all = Mutex<[[String]]>([])
    }

    /// Hands each entry's journald fields (as ``JournalLogHandler`` would send them) to `entries`.
    struct SharedRecorder: LogHandler {
        let label: String
        let entries: Entries
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            var merged = metadata
            if let eventMetadata = event.metadata { merged.merge(eventMetadata) { $1 } }
            let fields = JournalLogHandler.journalFields(event, label: label, metadata: merged)
            entries.all.withLock { $0.append(fields) }
        }
    }

    @Test func theComponentAndEveryMetadataKeyBecomeJournalFields() {
        let event = LogEvent(
            level: .info, message: "book in the library", metadata: ["scan_id": "abc", "job_id": "j1", "isbn": "978"],
            source: nil, file: "F.swift", function: "f()", line: 7)
        let fields = JournalLogHandler.journalFields(event, label: "uplink", metadata: event.metadata ?? [:])
        for expected in [
            "SYSLOG_IDENTIFIER=swiftwing", "COMPONENT=uplink", "SCAN_ID=abc", "JOB_ID=j1", "ISBN=978",
            "MESSAGE=book in the library", "PRIORITY=6",
        ] {
            #expect(fields.contains(expected), "missing \(expected) in \(fields)")
        }
    }

    @Test func everyLineOfAPressCarriesTheScanIDTheShutterPrints() async throws {
        let rig = try await ScanPipelineTests.Rig(identify: .init(uploadPoorFrames: true))
        let entries = Entries()
        let pipeline = ScanPipeline(
            camera: rig.supervisor, worker: rig.worker, database: rig.database, stateDirectory: rig.state,
            settings: .init(
                maxLongEdge: 1920, jpegQuality: 85, thumbnailLongEdge: 160, rotation: .none,
                captureTimeout: .seconds(2), minimumFreeBytes: 0, identify: .init(uploadPoorFrames: true)),
            feedback: rig.feedback, logger: Logger(label: "pipeline") { SharedRecorder(label: $0, entries: entries) })
        let outcome = await pipeline.press(ShutterPress(time: .now(), source: .controlSocket))
        await rig.tearDown()
        guard case .saved(let record) = outcome else {
            Issue.record("refused: \(outcome)")
            return
        }
        let lines = entries.all.withLock { $0 }
        let messages = lines.compactMap { $0.first { $0.hasPrefix("MESSAGE=") } }
        #expect(messages == ["MESSAGE=shutter pressed", "MESSAGE=scan saved", "MESSAGE=scan queued for the backend"])
        for entry in lines {
            #expect(entry.contains("SCAN_ID=\(record.idempotencyKey)"), "no SCAN_ID in \(entry)")
            #expect(entry.contains("COMPONENT=pipeline"))
        }
    }
}
