import Synchronization
import Testing

@testable import SwiftWingCore

#if canImport(Glibc)
    import Glibc
#endif

/// A deadline far enough away that reaching it means the test failed.
private func farDeadline() -> MonotonicInstant { MonotonicInstant.now().advanced(byNanoseconds: 30_000_000_000) }

@Suite struct SystemLayerTests {
    @Test func threadNamesLongerThanTheKernelKeepsAreRefused() {
        #expect(DeviceThread.nameProblem("swiftwing-panel") == nil, "15 bytes is the most Linux keeps")
        let problem = DeviceThread.nameProblem("swiftwing-buzzer")
        #expect(problem?.contains("\"swiftwing-buzze\"") == true, "the error shows the name as the kernel would cut it")
        #expect(DeviceThread.nameProblem("") != nil)
    }

    @Test func aDeviceThreadRunsUnderItsNameAndJoins() {
        let seen = Mutex<String?>(nil)
        let thread = DeviceThread(name: "swiftwing-panel") { seen.withLock { $0 = DeviceThread.currentName } }
        thread.join()
        thread.join()  // a second join returns at once
        #expect(seen.withLock { $0 } == "swiftwing-panel")
        #expect(thread.isRealtime == nil, "no priority was asked for")
    }

    @Test func aWakeEventWakesAThreadBlockedInPoll() throws {
        let wake = try WakeEvent()
        let ready = Mutex<[Int32: Int16]?>(nil)
        // A deadline far away: returning with the event readable proves the signal woke the wait.
        let thread = DeviceThread(name: "test-wake") {
            ready.withLock { $0 = try? waitReadable([wake.descriptor], until: farDeadline()) }
        }
        usleep(20_000)  // lets the thread reach its poll(2): the kernel's wait is what is tested
        wake.signal()
        thread.join()
        #expect(ready.withLock { $0 }?[wake.descriptor] != nil)
        #expect(isReadable(wake.descriptor), "the event stays readable until drained")
        wake.drain()
        #expect(!isReadable(wake.descriptor))
    }

    @Test func waitReadableReturnsNothingAtItsDeadline() throws {
        let wake = try WakeEvent()
        let start = MonotonicInstant.now()
        let deadline = start.advanced(byNanoseconds: 30_000_000)
        let ready = try waitReadable([wake.descriptor], until: deadline)
        #expect(ready.isEmpty)
        #expect(MonotonicInstant.now() >= deadline, "poll's timeout is rounded up, never short")
        #expect(try waitReadable([wake.descriptor], until: start).isEmpty, "a past deadline only looks")
    }

    @Test func pollTimeoutsRoundUpAndNeverGoNegative() {
        let now = MonotonicInstant(nanoseconds: 5_000_000_000)
        #expect(pollTimeout(until: nil, now: now) == -1)
        #expect(pollTimeout(until: now.advanced(byNanoseconds: -5_000_000), now: now) == 0)
        #expect(pollTimeout(until: now, now: now) == 0)
        #expect(pollTimeout(until: now.advanced(byNanoseconds: 1), now: now) == 1, "a nanosecond away waits 1 ms")
        #expect(pollTimeout(until: now.advanced(byNanoseconds: 1_000_000), now: now) == 1)
        #expect(pollTimeout(until: now.advanced(byNanoseconds: 1_000_001), now: now) == 2)
        #expect(pollTimeout(until: MonotonicInstant(nanoseconds: .max / 2), now: now) == Int32.max)
    }

    @Test func interruptedCallsAreRetriedAndOtherErrorsThrown() throws {
        var calls = 0
        let result = try retryingOnInterrupt("test") { () -> Int32 in
            calls += 1
            if calls < 3 {
                errno = EINTR
                return -1
            }
            return 7
        }
        #expect(result == 7 && calls == 3)
        #expect(throws: SystemCallError("open", subject: "/nowhere", errno: ENOENT)) {
            try retryingOnInterrupt("open", subject: "/nowhere") { () -> Int32 in
                errno = ENOENT
                return -1
            }
        }
    }

    @Test func aSignalDuringPollDoesNotEndTheWait() throws {
        // A handler without SA_RESTART: poll returns EINTR whenever the signal lands during it.
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        var previous = sigaction()
        sigaction(SIGUSR2, &action, &previous)
        defer { sigaction(SIGUSR2, &previous, nil) }

        let wake = try WakeEvent()
        let target = Mutex<pthread_t?>(nil)
        let outcome = Mutex<Result<[Int32: Int16], SystemCallError>?>(nil)
        let thread = DeviceThread(name: "test-eintr") {
            target.withLock { $0 = pthread_self() }
            let result = Result { () throws(SystemCallError) in
                try waitReadable([wake.descriptor], until: farDeadline())
            }
            outcome.withLock { $0 = result }
        }
        for _ in 0..<20 {
            usleep(5_000)  // signals a thread in the kernel's poll(2) until it returns
            if let handle = target.withLock({ $0 }) { pthread_kill(handle, SIGUSR2) }
        }
        #expect(outcome.withLock { $0 } == nil, "the signals must not end the wait")
        wake.signal()
        thread.join()
        let ready = try outcome.withLock { $0 }?.get()
        #expect(ready?[wake.descriptor] != nil)
    }

    @Test func readFileReadsAllOrAPrefix() throws {
        let path = "/tmp/swiftwing-core-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { unlink(path) }
        let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try bytes.withUnsafeBytes {
            try FileOperations.writeDurably($0, to: path, temporaryPath: path + ".tmp", mode: 0o600)
        }
        #expect(try FileOperations.readFile(path) == bytes)
        #expect(try FileOperations.readFile(path, limit: 1000) == Array(bytes.prefix(1000)))
        // /proc files report size 0 and are read until their end.
        #expect(try !FileOperations.readFile("/proc/self/stat").isEmpty)
        #expect(throws: SystemCallError.self) { try FileOperations.readFile(path + ".missing") }
    }
}

@Suite struct AllocatorTuningTests {
    /// glibc's default raises its mmap threshold to 4 MiB after the first free, and from then on
    /// grows an arena for every 1 MiB block, where the memory stays resident once freed. Tuned, a
    /// 1 MiB block that the arena's free space cannot hold gets a mapping of its own. The blocks are
    /// kept alive so that other suites' free chunks (they allocate in parallel) are used up, not
    /// handed out again; asked of the blocks themselves, because the process-wide count of mapped
    /// blocks (mallinfo2) is never undisturbed in a full run.
    @Test func frameSizedBlocksBecomeMappingsOfTheirOwnAfterALargerOneWasFreed() {
        #expect(AllocatorTuning.apply())
        let large = UnsafeMutableRawPointer.allocate(byteCount: 4 << 20, alignment: 64)
        large.deallocate()
        var blocks: [UnsafeMutableRawPointer] = []
        defer { for block in blocks { block.deallocate() } }
        var mapped = 0
        // Up to 1 GiB of address space (untouched, so not resident): once, 64 MiB was not enough, other suites having
        // freed more than that into the arena.
        for _ in 0..<1024 where mapped == 0 {
            let block = UnsafeMutableRawPointer.allocate(byteCount: 1 << 20, alignment: 64)
            blocks.append(block)
            // glibc's chunk header is the word before the block; its bit 1 (IS_MMAPPED) marks a
            // block served by a mapping of its own.
            if block.load(fromByteOffset: -MemoryLayout<UInt>.size, as: UInt.self) & 2 != 0 { mapped += 1 }
        }
        #expect(mapped > 0, "none of \(blocks.count) live 1 MiB blocks was a mapping of its own")
    }
}

@Suite struct FreeMemoryReturnTests {
    /// 8 MiB of small blocks freed below one that stays (so no arena top can be trimmed) are held by
    /// malloc until ``AllocatorTuning/returnFreeMemory()`` hands their pages back.
    @Test func freedSmallBlocksBelowALiveOneAreReturned() {
        AllocatorTuning.apply()
        var blocks: [UnsafeMutableRawPointer] = []
        for _ in 0..<8192 {
            let block = UnsafeMutableRawPointer.allocate(byteCount: 1024, alignment: 16)
            block.initializeMemory(as: UInt8.self, repeating: 1, count: 1024)  // resident
            blocks.append(block)
        }
        let live = UnsafeMutableRawPointer.allocate(byteCount: 1024, alignment: 16)
        defer { live.deallocate() }
        for block in blocks { block.deallocate() }
        #expect(AllocatorTuning.returnFreeMemory(), "malloc_trim returned nothing of 8 MiB freed")
    }
}

@Suite struct TransparentHugePageTests {
    /// A 2 MiB-aligned stretch that even asks for huge pages (MADV_HUGEPAGE, which the kernel's
    /// `madvise` mode honours) gets 4 KiB pages once the tuning is applied: one touched byte costs
    /// one page, not 2 MiB.
    @Test func aTouchedAlignedRegionGetsNoHugePage() throws {
        #expect(AllocatorTuning.apply())
        #expect(AllocatorTuning.transparentHugePagesDisabled)
        let hugePage = 2 << 20
        let size = 2 * hugePage
        let mapping = try #require(mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
        #expect(mapping != MAP_FAILED)
        defer { munmap(mapping, size) }
        let aligned = (Int(bitPattern: mapping) + hugePage - 1) & ~(hugePage - 1)
        let start = try #require(UnsafeMutableRawPointer(bitPattern: aligned))
        _ = madvise(start, hugePage, MADV_HUGEPAGE)
        start.storeBytes(of: 1, as: UInt8.self)
        let (resident, huge) = try Self.residentAndHugeKiB(of: Int(bitPattern: mapping))
        #expect(huge == 0, "\(huge) KiB of huge pages")
        #expect(resident <= 64, "one touched byte left \(resident) KiB resident")
    }

    /// `Rss` and `AnonHugePages` of the mapping that starts at `address`, from /proc/self/smaps.
    static func residentAndHugeKiB(of address: Int) throws -> (Int, Int) {
        let smaps = String(decoding: try FileOperations.readFile("/proc/self/smaps"), as: UTF8.self)
        var inMapping = false
        var resident = 0
        var huge = 0
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let first = fields.first else { continue }
            if first.contains("-"), let start = Int(first.split(separator: "-")[0], radix: 16) {
                inMapping = start == address
            } else if inMapping, fields.count >= 2, let kib = Int(fields[1]) {
                if first == "Rss:" { resident = kib }
                if first == "AnonHugePages:" { huge = kib }
            }
        }
        return (resident, huge)
    }
}
