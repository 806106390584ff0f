// Compiled only by compare-eventsource.sh, together with mattt/EventSource 1.1.1's unmodified
// EventSource.swift (excluded from the SwiftPM target).
//
// EventSource 1.1.1 calls `URLSession.bytes(for:delegate:)`, which Apple's Foundation has and
// swift-corelibs FoundationNetworking does not, so the package does not compile on Linux. This
// stand-in lets the file compile; it is never called: the benchmark uses only `EventSource.Parser`.
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking

    struct UnavailableAsyncBytes: AsyncSequence, Sendable {
        typealias Element = UInt8

        struct AsyncIterator: AsyncIteratorProtocol {
            mutating func next() async throws -> UInt8? { nil }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator() }
    }

    extension URLSession {
        func bytes(
            for request: URLRequest, delegate: (any URLSessionTaskDelegate)?
        ) async throws -> (UnavailableAsyncBytes, URLResponse) {
            throw URLError(.unsupportedURL)
        }
    }
#endif
