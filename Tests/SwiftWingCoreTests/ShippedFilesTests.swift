import Glibc
import SwiftWingCore
import Testing

@Suite(.serialized) struct ShippedFilesTests {
    @Test("the environment comes first, then the installed copy beside the binary, then the source tree")
    func candidatesInOrder() {
        setenv(ShippedFiles.environmentVariable, "/srv/swiftwing-data", 1)
        defer { unsetenv(ShippedFiles.environmentVariable) }
        let candidates = ShippedFiles.candidates("shelves", executable: "/opt/sw/bin/swiftwing")
        #expect(
            candidates == [
                "/srv/swiftwing-data/shelves", "/opt/sw/share/swiftwing/shelves",
                ShippedFiles.sourceTree + "/Fixtures/shelves",
            ])
    }

    @Test("the source tree's shelf photos are found, with their licence, and a missing folder is nil")
    func findsTheShelvesInTheSourceTree() throws {
        unsetenv(ShippedFiles.environmentVariable)
        let folder = try #require(ShippedFiles.folder("shelves"), "Fixtures/shelves is missing from the checkout")
        #expect(folder == ShippedFiles.sourceTree + "/Fixtures/shelves")
        for name in ["one_shelf.jpg", "two_shelves.jpg", "LICENSE"] {
            #expect(access(folder + "/" + name, R_OK) == 0, "\(name) missing beside the photos")
        }
        #expect(ShippedFiles.folder("no-such-folder") == nil)
    }

    @Test("an empty SWIFTWING_DATA_DIR is ignored")
    func emptyEnvironmentIsIgnored() {
        setenv(ShippedFiles.environmentVariable, "", 1)
        defer { unsetenv(ShippedFiles.environmentVariable) }
        #expect(ShippedFiles.candidates("shelves", executable: nil) == [ShippedFiles.sourceTree + "/Fixtures/shelves"])
    }

    @Test("the running program's path is read from /proc/self/exe")
    func currentExecutable() throws {
        let path = try #require(ShippedFiles.currentExecutable())
        #expect(path.hasPrefix("/"))
        #expect(access(path, X_OK) == 0)
    }
}
