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

@main enum FuzzMain { static func main() { FuzzInput.main(fuzzUploadEnvelope) } }
