// DemoScenes: writes the synthetic camera's scenes for the offline part of `make demo` (scripts/demo.sh):
//   FOLDER/barcode/book.jpg   a shelf with a book's EAN-13 label (an ISBN in the reference catalogue)
//   FOLDER/blurred/shelf.jpg  the shelf box-blurred, as a shaking hand takes it
// Usage: DemoScenes FOLDER [WIDTH HEIGHT]   (1920x1080 by default, the daemon's camera size)
import Foundation
import Identify
import Imaging
import SwiftWingCore
import SwiftWingTesting

let arguments = Array(CommandLine.arguments.dropFirst())
guard let folder = arguments.first, arguments.count == 1 || arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: DemoScenes FOLDER [WIDTH HEIGHT]\n".utf8))
    exit(2)
}
let width = arguments.count == 3 ? Int(arguments[1]) ?? 1920 : 1920
let height = arguments.count == 3 ? Int(arguments[2]) ?? 1080 : 1080

func write(_ frame: YUV420Frame, to path: String) throws {
    try FileManager.default.createDirectory(
        atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try Data(try JPEGEncoder(quality: 92).encode(frame)).write(to: URL(fileURLWithPath: path))
}

do {
    guard let scene = try BookScenes.shelfWithBarcode(width: width, height: height),
        let shelf = try ImagingFixtures.shelfFrame(width: width, height: height)
    else {
        FileHandle.standardError.write(Data("DemoScenes: the shelf photos (Fixtures/shelves) are missing\n".utf8))
        exit(1)
    }
    try write(scene, to: folder + "/barcode/book.jpg")
    try write(FrameDegradation.blurred(shelf, radius: 6), to: folder + "/blurred/shelf.jpg")
    print(BookScenes.catalogueISBN)
} catch {
    FileHandle.standardError.write(Data("DemoScenes: \(error)\n".utf8))
    exit(1)
}
