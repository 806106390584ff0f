import Foundation

#if FUZZING
    /// libFuzzer's driver (compiler-rt, linked by `-sanitize=fuzzer`): parses its flags, then calls
    /// `callback` with each input. SwiftPM gives every executable its own `main`, so libFuzzer's is not used.
    @_silgen_name("LLVMFuzzerRunDriver")
    private func llvmFuzzerRunDriver(
        _ argc: UnsafeMutablePointer<Int32>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
    ) -> Int32

    /// The target's body, for the C callback that cannot capture it.
    nonisolated(unsafe) private var fuzzedBody: ((UnsafeRawBufferPointer) -> Void)?
#endif

/// A fuzz target's entry point: the same code runs under libFuzzer (built with
/// `-sanitize=fuzzer -DFUZZING`, scripts/fuzz.sh) and as a replay tool in an ordinary build.
public enum FuzzInput {
    /// The target's `main`: under libFuzzer (built with `-DFUZZING`) hands `body` to libFuzzer's driver
    /// with the command line; otherwise replays the files named on the command line. Then exits.
    public static func main(_ body: @escaping (UnsafeRawBufferPointer) -> Void) -> Never {
        #if FUZZING
            fuzzedBody = body
            var argc = CommandLine.argc
            var argv = CommandLine.unsafeArgv
            exit(
                llvmFuzzerRunDriver(&argc, &argv) { data, size in
                    fuzzedBody?(UnsafeRawBufferPointer(start: data, count: size))
                    return 0
                })
        #else
            exit(replay(Array(CommandLine.arguments.dropFirst()), body))
        #endif
    }

    /// Runs `body` on each file named in the arguments (a crash input, or every file of a corpus
    /// folder), so a libFuzzer finding can be replayed in an ordinary debug build.
    public static func replay(_ arguments: [String], _ body: (UnsafeRawBufferPointer) -> Void) -> Int32 {
        var files: [String] = []
        for path in arguments {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
                FileHandle.standardError.write(Data("\(path): no such file or folder; give fuzz inputs\n".utf8))
                return 2
            }
            if isFolder.boolValue {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
                files += names.sorted().map { "\(path)/\($0)" }
            } else {
                files.append(path)
            }
        }
        guard !files.isEmpty else {
            FileHandle.standardError.write(Data("usage: give input files or corpus folders to replay\n".utf8))
            return 2
        }
        for file in files {
            guard let bytes = FileManager.default.contents(atPath: file) else { continue }
            bytes.withUnsafeBytes { body($0) }
        }
        print("replayed \(files.count) inputs")
        return 0
    }

    /// Splits an input into a selector byte and the rest, so one input can also choose a variant
    /// (a chunk size, an event name) without a second input.
    public static func selector(_ bytes: UnsafeRawBufferPointer) -> (UInt8, UnsafeRawBufferPointer) {
        guard let first = bytes.first else { return (0, bytes) }
        return (first, UnsafeRawBufferPointer(rebasing: bytes.dropFirst()))
    }
}
