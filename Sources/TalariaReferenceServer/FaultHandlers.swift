import Foundation
import Hummingbird

extension Handlers {
    // MARK: Faults

    func queueFaults(_ request: Request, _ context: Context) async throws -> Response {
        struct Body: Decodable { let faults: [String] }
        let buffer = try await request.body.collect(upTo: 1_048_576)
        let parsed: [Fault]
        do {
            let body = try JSONDecoder().decode(Body.self, from: Data(buffer.readableBytesView))
            parsed = try body.faults.map { spelling throws(Fault.ParseError) in try Fault.parse(spelling) }
        } catch {
            return problem(400, "INVALID_REQUEST", "Invalid fault list", "\(error)", request)
        }
        let pending = await state.enqueue(parsed)
        return ReferenceServer.json(
            200, ["queued": .array(parsed.map { .string($0.spelling) }), "pending": .int(pending)])
    }
}
