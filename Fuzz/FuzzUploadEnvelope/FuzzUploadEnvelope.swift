import Foundation
import FuzzSupport
import Talaria

private let base = URL(string: "http://127.0.0.1:8787/")!

/// A response body through the upload-envelope reader and the problem reader: the first accepts it
/// or throws a decoding error, the second never fails; neither may trap.
func fuzzUploadEnvelope(_ bytes: UnsafeRawBufferPointer) {
    if let accepted = try? UploadAccepted.decode(bytes, base: base) {
        precondition(!accepted.jobID.isEmpty, "an upload was accepted without a job id")
    }
    let problem = ProblemDetails.decode(bytes)
    _ = problem.description
}

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzUploadEnvelope(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
#else
@main
enum FuzzUploadEnvelopeReplay {
    static func main() { exit(FuzzInput.replay(Array(CommandLine.arguments.dropFirst()), fuzzUploadEnvelope)) }
}
#endif
