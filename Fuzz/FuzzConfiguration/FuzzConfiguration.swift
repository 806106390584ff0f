import Appliance
import Foundation
import FuzzSupport

/// The loader reads files, so each input is written to one scratch file of this process.
private let scratchPath = NSTemporaryDirectory() + "swiftwing-fuzz-config-\(getpid()).toml"

/// TOML text through the configuration loader: a configuration or a ConfigurationError that names
/// the file and a fix; never a trap.
func fuzzConfiguration(_ bytes: UnsafeRawBufferPointer) {
    guard FileManager.default.createFile(atPath: scratchPath, contents: Data(bytes)) else {
        fatalError("cannot write the scratch file \(scratchPath); check that the temporary folder is writable")
    }
    do {
        _ = try ConfigurationLoader.load(path: scratchPath, environment: [:])
    } catch {
        precondition(error.description.hasPrefix(scratchPath), "the error does not name the file: \(error)")
        precondition(!error.fix.isEmpty, "the error gives no fix: \(error)")
    }
}

@main enum FuzzMain { static func main() { FuzzInput.main(fuzzConfiguration) } }
