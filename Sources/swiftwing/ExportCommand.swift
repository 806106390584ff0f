import Appliance
import ArgumentParser
import Foundation
import Store

extension ExportFormat: ExpressibleByArgument {}

extension SwiftWingCommand {
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Export the library as CSV: to standard output, a file, or a USB stick (what udev starts).",
            discussion: """
                Works with or without the daemon. --device mounts the stick privately, writes \
                SwiftWing_Library_YYYY-MM-DD.csv (and _goodreads.csv) and tells the daemon, whose panel then \
                says "safe to remove".
                """)

        @OptionGroup var common: CommonOptions

        @Option(
            help:
                "swiftwing (every column) or goodreads (a Goodreads library export). Default: swiftwing; with --device both."
        )
        var format: ExportFormat?

        @Option(help: "Write the CSV to this file (replaced whole, never left half-written).")
        var to: String?

        @Flag(
            help:
                "Export the spines read but not identified (to check, picked and dismissed) instead of the books: their own CSV."
        )
        var spines = false

        @Option(help: "Write onto the USB stick with this partition, e.g. /dev/sda1 (needs CAP_SYS_ADMIN to mount).")
        var device: String?

        @Option(
            name: .customLong("runtime-dir"),
            help: "Where the stick is mounted (default: $RUNTIME_DIRECTORY, else /run/swiftwing-export/NAME).")
        var runtimeDirectory: String?

        func validate() throws {
            if to != nil && device != nil { throw ValidationError("give --to FILE or --device DEV, not both") }
            if spines && (device != nil || format != nil) {
                throw ValidationError("--spines writes its own CSV to standard output or --to FILE")
            }
        }

        func run() throws {
            let configuration = try common.load()
            if spines {
                try exportSpines(configuration)
                return
            }
            if let device {
                try exportToStick(device: device, configuration: configuration)
                return
            }
            let export = try openExport(configuration)
            let format = format ?? .swiftwing
            do {
                if let to {
                    let books = try export.write(format, to: absolute(to))
                    FileHandle.standardError.write(Data("exported \(books) books to \(to)\n".utf8))
                } else {
                    FileHandle.standardOutput.write(Data(try LibraryCSV.encode(export.books(), format: format)))
                }
            } catch {
                throw CommandFailure(error.description)
            }
        }

        /// Every spine read and not identified, for the stick's spines file.
        func openSpines(_ configuration: ApplianceConfiguration) throws -> [SpineToCheck] {
            do {
                let database = try AppDatabase.openReadOnly(StateDirectory(path: configuration.stateDirectory))
                return try database.spinesToCheck(all: true)
            } catch {
                throw CommandFailure("the spines to check could not be read: \(error.description)")
            }
        }

        /// The spines to check as their own file (``SpinesCSV``), every state, oldest first.
        func exportSpines(_ configuration: ApplianceConfiguration) throws {
            do {
                let database = try AppDatabase.openReadOnly(StateDirectory(path: configuration.stateDirectory))
                let all = try database.spinesToCheck(all: true)
                let bytes = SpinesCSV.encode(all)
                if let to {
                    try LibraryExport.writeSpines(bytes, to: absolute(to))
                    FileHandle.standardError.write(Data("exported \(all.count) spines to \(to)\n".utf8))
                } else {
                    FileHandle.standardOutput.write(Data(bytes))
                }
            } catch let error as CustomStringConvertible {
                throw CommandFailure("the spines were not exported: \(error.description)")
            }
        }

        func openExport(_ configuration: ApplianceConfiguration) throws -> LibraryExport {
            do {
                let database = try AppDatabase.openReadOnly(StateDirectory(path: configuration.stateDirectory))
                return LibraryExport(library: database.library)
            } catch {
                throw CommandFailure("the library could not be read: \(error.description)")
            }
        }

        /// The udev-started export: every outcome goes to the journal (stdout/stderr) and to the panel.
        func exportToStick(device: String, configuration: ApplianceConfiguration) throws {
            let socket = configuration.controlSocket
            let name = device.split(separator: "/").last.map(String.init) ?? device
            let work =
                runtimeDirectory ?? ProcessInfo.processInfo.environment["RUNTIME_DIRECTORY"]
                ?? "/run/swiftwing-export/\(name)"
            let stick = StickExport(
                device: device, workDirectory: work, formats: format.map { [$0] } ?? ExportFormat.allCases,
                day: LibraryExport.day())
            if let place = stick.inUse() {
                // A USB boot disk, not a stick: no panel message, nothing touched.
                print("\(device) left alone: it (or its disk) is in use at \(place), so it is not a stick to export to")
                return
            }
            do {
                try? FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
                // The state directory is there before any export and outlives them all (a unit's runtime
                // directory and its parent come and go with the units): its flock is one export at a time.
                let lock = try ExportLock.acquire(directory: configuration.stateDirectory, device: name)
                defer { lock.release() }
                let export = try openExport(configuration)
                let books = try export.books()
                let spines = try openSpines(configuration)
                // The pid: the panel's "do not remove" stays until this process has ended.
                tell(.exportStarted(books: books.count, device: name, pid: getpid()), socket: socket)
                let result = try stick.run(books: books, spines: spines)
                print(
                    "exported \(result.books) books to \(name): \(result.files.joined(separator: ", ")) — safe to remove"
                )
                tell(.exportFinished(books: result.books, file: result.files[0], device: name), socket: socket)
            } catch let error as ExportError {
                tell(.exportFailed(reason: error.panelText, device: name), socket: socket)
                throw CommandFailure(error.description)
            } catch {
                tell(.exportFailed(reason: "Export failed. See the journal.", device: name), socket: socket)
                throw error
            }
        }

        /// Tells the daemon; an export without a daemon still succeeds (there is just no panel to show it).
        func tell(_ request: ControlRequest, socket: String) {
            do {
                _ = try ControlClient.send(request, to: socket)
            } catch {
                FileHandle.standardError.write(Data("note: the panel was not told (\(error.description))\n".utf8))
            }
        }
    }
}
