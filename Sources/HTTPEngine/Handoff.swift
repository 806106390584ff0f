import Synchronization

/// A value set once by the transfer thread and awaited once by the caller of `send`.
final class OneShot<Value: Sendable>: Sendable {
    private enum State {
        case empty
        case waiting(CheckedContinuation<Value, Never>)
        case done(Value)
    }

    private let state = Mutex(State.empty)

    /// Sets the value and wakes the waiter; later calls are ignored.
    func fulfil(_ value: Value) {
        let waiter: CheckedContinuation<Value, Never>? = state.withLock { state in
            switch state {
            case .empty:
                state = .done(value)
                return nil
            case .waiting(let continuation):
                state = .done(value)
                return continuation
            case .done:
                return nil
            }
        }
        waiter?.resume(returning: value)
    }

    /// Waits for the value. Only one caller may wait.
    func value() async -> Value {
        await withCheckedContinuation { continuation in
            let ready: Value? = state.withLock { state in
                switch state {
                case .empty:
                    state = .waiting(continuation)
                    return nil
                case .done(let value):
                    return value
                case .waiting:
                    preconditionFailure("OneShot: a second waiter")
                }
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

/// Between the transfer thread (producer) and the one consumer of a `stream`: the parts not yet
/// taken, and how the stream ended. The producer is told to pause when more than
/// `pauseAboveBytes` of body wait, and the consumer asks it to resume once half of that drained,
/// so a slow consumer bounds memory instead of growing it.
final class StreamBuffer: Sendable {
    private struct State {
        var parts: [HTTPStreamPart] = []
        var firstUnread = 0
        var bufferedBytes = 0
        var ending: Result<Void, HTTPError>?
        var endingDelivered = false
        var waiter: CheckedContinuation<Result<HTTPStreamPart?, HTTPError>, Never>?
        var producerPaused = false
        var consumerGone = false

        mutating func takeReady() -> Result<HTTPStreamPart?, HTTPError>? {
            if firstUnread < parts.count {
                let part = parts[firstUnread]
                parts[firstUnread] = .body([])  // release the bytes now, not when the array drains
                firstUnread += 1
                if case .body(let bytes) = part { bufferedBytes -= bytes.count }
                if firstUnread == parts.count {
                    parts.removeAll(keepingCapacity: true)
                    firstUnread = 0
                } else if firstUnread >= 256 && firstUnread * 2 >= parts.count {
                    // A consumer that never quite catches up must not leave a growing tail of slots.
                    parts.removeFirst(firstUnread)
                    firstUnread = 0
                }
                return .success(part)
            }
            if let ending {
                if endingDelivered { return .success(nil) }
                endingDelivered = true
                return ending.map { nil }
            }
            if consumerGone { return .failure(.cancelled) }
            return nil
        }
    }

    let pauseAboveBytes: Int
    private let state = Mutex(State())

    init(pauseAboveBytes: Int) {
        self.pauseAboveBytes = pauseAboveBytes
    }

    /// Producer: hands over a part. Returns false (the part not taken) when the producer must pause.
    func deliver(_ part: HTTPStreamPart) -> Bool {
        enum Outcome {
            case taken, pause
            case handOver(CheckedContinuation<Result<HTTPStreamPart?, HTTPError>, Never>)
        }
        let outcome: Outcome = state.withLock { state in
            if state.consumerGone || state.ending != nil { return .taken }
            if let waiter = state.waiter {
                state.waiter = nil
                return .handOver(waiter)
            }
            if case .body(let bytes) = part {
                if state.bufferedBytes >= pauseAboveBytes {
                    state.producerPaused = true
                    return .pause
                }
                state.bufferedBytes += bytes.count
            }
            state.parts.append(part)
            return .taken
        }
        switch outcome {
        case .taken: return true
        case .pause: return false
        case .handOver(let waiter):
            waiter.resume(returning: .success(part))
            return true
        }
    }

    /// Producer: the stream ended (successfully or not). Later calls are ignored.
    func finish(_ ending: Result<Void, HTTPError>) {
        let waiter = state.withLock { state -> CheckedContinuation<Result<HTTPStreamPart?, HTTPError>, Never>? in
            guard state.ending == nil else { return nil }
            state.ending = ending
            guard let waiter = state.waiter else { return nil }
            state.waiter = nil
            state.endingDelivered = true
            return waiter
        }
        waiter?.resume(returning: ending.map { nil })
    }

    /// Consumer: the next part, `nil` at the end, or why the stream failed.
    func next() async -> Result<HTTPStreamPart?, HTTPError> {
        if let ready = state.withLock({ $0.takeReady() }) { return ready }
        return await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Result<HTTPStreamPart?, HTTPError>? in
                if let ready = state.takeReady() { return ready }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Consumer: whether the producer paused and enough drained that it should resume now (once).
    func takeResumeRequest() -> Bool {
        state.withLock { state in
            guard state.producerPaused, !state.consumerGone, state.bufferedBytes <= pauseAboveBytes / 2 else {
                return false
            }
            state.producerPaused = false
            return true
        }
    }

    /// Consumer: it stopped listening. Wakes a waiting `next()` with `.cancelled` and drops what is buffered.
    func consumerLeft() {
        let waiter = state.withLock { state -> CheckedContinuation<Result<HTTPStreamPart?, HTTPError>, Never>? in
            state.consumerGone = true
            state.parts = []
            state.firstUnread = 0
            state.bufferedBytes = 0
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: .failure(.cancelled))
    }
}
