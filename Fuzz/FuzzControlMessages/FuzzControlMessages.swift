import Appliance
import Foundation
import FuzzSupport

/// Bytes from a control-socket client through the request reader, as the daemon reads them: the
/// line up to the first newline, then ``ControlRequest/parse(_:)``. A request it accepts must come
/// back the same after encoding and reading again; a refusal must say what to send.
func fuzzControlMessage(_ bytes: UnsafeRawBufferPointer) {
    let line = bytes.prefix { $0 != UInt8(ascii: "\n") }
    switch ControlRequest.parse(line) {
    case .success(let request):
        guard let encoded = try? JSONEncoder().encode(request) else {
            preconditionFailure("an accepted request could not be encoded: \(request)")
        }
        guard case .success(let again) = ControlRequest.parse(Array(encoded)) else {
            preconditionFailure(
                "an accepted request was refused once encoded: \(String(decoding: encoded, as: UTF8.self))")
        }
        precondition(again == request, "a request changed on its way through JSON: \(request) became \(again)")
    case .failure(let problem):
        precondition(!problem.description.isEmpty, "a refusal without a reason")
    }
}

@main enum FuzzMain { static func main() { FuzzInput.main(fuzzControlMessage) } }
