import Foundation
import Logging
import SwiftWingCore
import Synchronization
import Testing

@testable import Appliance

/// Runs a blocking call (a socket client) on a thread of its own, never on the cooperative pool:
/// the server's handler needs a pool thread to answer, so blocking one here could starve it.
func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}
