import CLinux

/// glibc's allocator, tuned for the daemon: a few busy threads that live for months and handle
/// frame-sized blocks (3 MiB at 1920x1080, 18 MiB at 12 MP).
///
/// glibc's defaults suit short programs with many threads: up to 8 arenas per core, each keeping the
/// memory its thread freed, and a "dynamic" mmap threshold that rises to the size of the largest
/// block freed (up to 32 MiB), after which frame-sized blocks come from an arena and stay resident
/// once freed. With two arenas and a fixed 128 KiB threshold every frame, decoded photo and scaled
/// picture is a mapping of its own that goes back to the kernel when freed, and peak resident memory
/// stays near what is in use (Benchmarks/README.md, "Daemon memory").
///
/// Transparent huge pages are turned off for the process. Kernels that default them to `always`
/// (Debian's) back any 2 MiB-aligned stretch of anonymous memory with one 2 MiB page at its first
/// touch: a thread stack whose top lands on such a boundary costs 2 MiB instead of a few dozen KiB,
/// and khugepaged later folds sparse heap regions into huge pages too. The daemon's blocks are a few
/// MiB at most; the TLB savings are not worth a resident set that depends on alignment luck.
public enum AllocatorTuning {
    public static let arenas: Int32 = 2
    public static let mmapThreshold: Int32 = 128 * 1024

    /// Applies the settings; call once at start, before other threads allocate. Returns `false` when
    /// glibc or the kernel refused one (the process then runs with their defaults, only using more
    /// memory).
    @discardableResult
    public static func apply() -> Bool {
        let malloc = sw_malloc_tune(arenas, mmapThreshold) == 0
        let hugePages = sw_disable_transparent_huge_pages() == 0
        return malloc && hugePages
    }

    /// Whether transparent huge pages are off for this process (``apply()`` turns them off).
    public static var transparentHugePagesDisabled: Bool {
        sw_transparent_huge_pages_disabled() == 1
    }

    /// Returns the free pages inside malloc's arenas to the kernel. glibc gives back only the free
    /// top of an arena on its own; the holes a burst of small blocks leaves below live blocks stay
    /// resident. Cheap (a walk of the free lists); call it when a burst of work is over.
    @discardableResult
    public static func returnFreeMemory() -> Bool {
        sw_malloc_trim() == 1
    }

    /// Blocks malloc serves from mappings of their own right now.
    public static var mappedBlocks: Int {
        Int(sw_malloc_mapped_blocks())
    }
}
