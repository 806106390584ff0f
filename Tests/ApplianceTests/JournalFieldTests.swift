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
