import Foundation

/// What a fuzz target's entry point does with one input: the same code runs under libFuzzer
/// (built with `-sanitize=fuzzer -DFUZZING`, scripts/fuzz.sh) and in the replay driver below.
public enum FuzzInput {
    /// libFuzzer's entry point calls this with one input.
    public static func run(_ data: UnsafePointer<UInt8>?, _ size: Int, _ body: (UnsafeRawBufferPointer) -> Void) -> Int32 {
        body(UnsafeRawBufferPointer(start: data, count: size))
        return 0
    }

    /// The replay driver's `main`: replays the files named on the command line, then exits.
    public static func replayArguments(_ body: (UnsafeRawBufferPointer) -> Void) -> Never {
        exit(replay(Array(CommandLine.arguments.dropFirst()), body))
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
