import Synchronization

/// A fixed-size block of memory for pixels, handed out by a ``BufferPool``.
///
/// When the last reference goes away the memory returns to its pool instead of being freed, so
/// the capture thread copies frames out of driver buffers without allocating.
public final class PixelBuffer: @unchecked Sendable {
    /// The writable bytes. Only the owner that filled the buffer writes; readers see it after the
    /// hand-off (an actor or stream boundary), which orders the accesses.
    public let bytes: UnsafeMutableRawBufferPointer
    private let pool: BufferPool?

    /// A buffer of its own, outside any pool (for tests, decoders and one-off images).
    public init(capacity: Int) {
        self.bytes = .allocate(byteCount: max(capacity, 1), alignment: 64)
        self.pool = nil
    }

    fileprivate init(bytes: UnsafeMutableRawBufferPointer, pool: BufferPool) {
        self.bytes = bytes
        self.pool = pool
    }

    public var capacity: Int { bytes.count }

    deinit {
        if let pool {
            pool.recycle(bytes)
        } else {
            bytes.deallocate()
        }
    }
}

/// A bounded pool of equally sized ``PixelBuffer``s.
///
/// `acquire()` never blocks: when every buffer is in use it returns `nil` and the caller drops the
/// frame (the capture loop must not wait for a slow consumer).
public final class BufferPool: Sendable {
    public let bufferSize: Int
    public let maximumBuffers: Int

    /// Raw memory owned by the pool; only ever touched by the one buffer that holds it.
    private struct Block: @unchecked Sendable {
        let bytes: UnsafeMutableRawBufferPointer
    }

    private struct State {
        var free: [Block] = []
        var allocated = 0
        var closed = false
    }

    private let state = Mutex(State())

    public init(bufferSize: Int, maximumBuffers: Int) {
        precondition(bufferSize > 0 && maximumBuffers > 0)
        self.bufferSize = bufferSize
        self.maximumBuffers = maximumBuffers
    }

    /// A buffer from the pool, or `nil` when all `maximumBuffers` are in use.
    public func acquire() -> PixelBuffer? {
        let block: Block? = state.withLock { state in
            if let reused = state.free.popLast() { return reused }
            guard state.allocated < maximumBuffers else { return nil }
            state.allocated += 1
            return Block(bytes: .allocate(byteCount: bufferSize, alignment: 64))
        }
        return block.map { PixelBuffer(bytes: $0.bytes, pool: self) }
    }

    /// Buffers currently handed out.
    public var inUse: Int {
        state.withLock { $0.allocated - $0.free.count }
    }

    fileprivate func recycle(_ bytes: UnsafeMutableRawBufferPointer) {
        let block = Block(bytes: bytes)
        state.withLock { state in
            state.free.append(block)
        }
    }

    deinit {
        // Outstanding buffers hold a strong reference to the pool, so every buffer is free here.
        state.withLock { state in
            for block in state.free { block.bytes.deallocate() }
            state.free.removeAll()
        }
    }
}
