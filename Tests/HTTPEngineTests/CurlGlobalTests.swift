import CCurl
import Foundation
import SwiftWingCore
import Testing

@testable import HTTPEngine

/// libcurl's process-wide set-up leaves libssh2's crypto library alone (the engine speaks only
/// HTTP and HTTPS), so a process using curl does not carry OpenSSL's initialised tables.
@Suite struct CurlGlobalTests {
    @Test func libssh2IsToldNotToInitialiseItsCryptoLibrary() throws {
        #expect(CurlGlobal.setUp.result == CURLE_OK)
        // Debian's libcurl (GnuTLS or OpenSSL build) links libssh2; the shim finds it among the
        // loaded libraries. Were it missing, there would be nothing to skip and this would fail,
        // which on Debian means the shim's lookup broke.
        #expect(CurlGlobal.setUp.libssh2CryptoSkipped)
        // Its effect: libcrypto stays as the loader left it. Initialised, OpenSSL's tables and
        // code put about 2.9 MiB of libcrypto in the resident set; loaded only, about 1.4 MiB.
        let resident = try Self.residentKiB(ofLibraryNamed: "libcrypto.so")
        #expect(resident < 2_048, "libcrypto has \(resident) KiB resident: something initialised OpenSSL")
    }

    /// The resident KiB of every mapping of a library whose path contains `name` (0 when unmapped).
    static func residentKiB(ofLibraryNamed name: String) throws -> Int {
        // /proc files report a size of 0, so read them to their end rather than by size.
        let smaps = String(decoding: try FileOperations.readFile("/proc/self/smaps"), as: UTF8.self)
        var inLibrary = false
        var total = 0
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let first = fields.first, first.contains("-"), first.first?.isHexDigit == true {
                inLibrary = fields.count >= 6 && fields[5].contains(name)
            } else if inLibrary, fields.first == "Rss:", fields.count >= 2, let kib = Int(fields[1]) {
                total += kib
            }
        }
        return total
    }
}
