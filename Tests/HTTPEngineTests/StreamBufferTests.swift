import Testing

@testable import HTTPEngine

@Suite struct StreamBufferTests {
    @Test func theProducerIsToldToPauseAboveTheLimitAndToResumeOnceHalfDrained() async throws {
        let buffer = StreamBuffer(pauseAboveBytes: 100)
        #expect(buffer.deliver(.head(HTTPResponseHead(status: 200, headers: [], version: .http1_1))))
        #expect(buffer.deliver(.body(Array(repeating: 1, count: 60))))
        #expect(buffer.deliver(.body(Array(repeating: 2, count: 60))))
        // 120 bytes wait: the next chunk is refused, and curl will offer it again after resuming.
        #expect(!buffer.deliver(.body(Array(repeating: 3, count: 10))))
        #expect(!buffer.takeResumeRequest())

        guard case .success(.head) = await buffer.next() else {
            Issue.record("head first")
            return
        }
        guard case .success(.body(let first)) = await buffer.next() else {
            Issue.record("then a body")
            return
        }
        #expect(first.count == 60)
        #expect(!buffer.takeResumeRequest(), "60 bytes still wait: more than half of the 100-byte bound")
        guard case .success(.body(let second)) = await buffer.next() else {
            Issue.record("the second body")
            return
        }
        #expect(second.first == 2)
        #expect(buffer.takeResumeRequest(), "drained")
        #expect(!buffer.takeResumeRequest(), "asked once")

        #expect(buffer.deliver(.body(Array(repeating: 3, count: 10))))
        buffer.finish(.success(()))
        guard case .success(.body(let third)) = await buffer.next() else {
            Issue.record("the refused chunk, again")
            return
        }
        #expect(third.first == 3)
        guard case .success(nil) = await buffer.next() else {
            Issue.record("then the end")
            return
        }
        guard case .success(nil) = await buffer.next() else {
            Issue.record("and the end stays")
            return
        }
    }

    @Test func aWaitingConsumerIsWokenByCancellationAndByFailure() async throws {
        let cancelled = StreamBuffer(pauseAboveBytes: 100)
        async let waiting = cancelled.next()
        try await Task.sleep(for: .milliseconds(50))  // lets the consumer reach its wait: nothing to await
        cancelled.consumerLeft()
        guard case .failure(.cancelled) = await waiting else {
            Issue.record("cancelled")
            return
        }

        let failed = StreamBuffer(pauseAboveBytes: 100)
        failed.finish(.failure(.connectionLost(detail: "reset")))
        guard case .failure(.connectionLost) = await failed.next() else {
            Issue.record("the failure")
            return
        }
        guard case .success(nil) = await failed.next() else {
            Issue.record("reported once")
            return
        }
    }
}
