// swift-tools-version:6.2
// SwiftWing: firmware for a book-scanning kiosk. See README.md and docs/architecture.md.
import PackageDescription

/// A C library found through pkg-config, with the Debian package that provides it.
func systemLibrary(_ name: String, pkgConfig: String, apt: String) -> Target {
    .systemLibrary(name: name, pkgConfig: pkgConfig, providers: [.apt([apt])])
}

/// Release link of the daemon and of swiftwing-web, for a smaller resident set (docs/architecture.md, "Memory and
/// start-up"): every page of code a process touches counts in its RSS, and the kernel maps 64 KiB around each fault.
/// lld places the functions the process runs (`order`: Linking/hot-functions.order made by scripts/hot-functions.sh,
/// Linking/web-hot-functions.order by Benchmarks/WebBench/hot-functions.sh) together at the front of .text; packed
/// relative relocations (DT_RELR, glibc >= 2.36) replace 2 MB of RELA entries read at every start; and the
/// executable exports no symbols.
func residentCodeLinkerFlags(order: String) -> [String] {
    [
        "-use-ld=lld",
        "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
        "-Xlinker", "--no-export-dynamic",
        "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/Linking/\(order)",
        "-Xlinker", "--no-warn-symbol-ordering",
    ]
}

/// Imaging, Identify and Panel are optimised in debug builds too: their per-pixel loops run 10-100x slower
/// unoptimised. A debug daemon's synthetic camera took 28 s to fit two shelf photos (0.46 s with this), `swiftwing
/// identify` 1.4 s a 12 MP photo (0.05-0.11 s), a press 0.46-0.60 s to durable (0.22-0.30 s); the VM rig runs debug
/// daemons under emulation, where that is minutes per test.
let optimisedInDebugBuilds: [SwiftSetting] = [.unsafeFlags(["-O"], .when(configuration: .debug))]

let package = Package(
    name: "SwiftWing",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "swiftwing", targets: ["swiftwing"]),
        .executable(name: "talaria-reference", targets: ["talaria-reference"]),
        .executable(name: "swiftwing-recognizer", targets: ["swiftwing-recognizer"]),
        .executable(name: "swiftwing-web", targets: ["swiftwing-web"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", exact: "0.6.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.3"),
        .package(url: "https://github.com/vapor/multipart-kit", exact: "4.7.1"),
        .package(url: "https://github.com/yaslab/CSV.swift", exact: "2.5.2"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", exact: "2.1.1"),
    ],
    targets: [
        // C libraries, one system-library target each, and the shims for what Swift cannot import. Each is
        // imported by its one wrapper only: CV4L2 by Camera, CJPEG by Imaging, CTurboJPEG by SwiftWingBench,
        // CGPIOD by Controls, CCurl by HTTPEngine, CSystemd by Appliance's System/ folder, CCairo by Panel,
        // CZBar, CPNG and CZXingShim by Identify, CNettle by WebInterface.
        systemLibrary("CV4L2", pkgConfig: "libv4l2", apt: "libv4l-dev"),
        systemLibrary("CJPEG", pkgConfig: "libjpeg", apt: "libjpeg62-turbo-dev"),
        systemLibrary("CTurboJPEG", pkgConfig: "libturbojpeg", apt: "libturbojpeg0-dev"),
        systemLibrary("CGPIOD", pkgConfig: "libgpiod", apt: "libgpiod-dev"),
        systemLibrary("CCurl", pkgConfig: "libcurl", apt: "libcurl4-gnutls-dev"),
        systemLibrary("CSystemd", pkgConfig: "libsystemd", apt: "libsystemd-dev"),
        // Cairo with its FreeType/fontconfig backend (cairo-ft, fontconfig come with libcairo2-dev).
        systemLibrary("CCairo", pkgConfig: "cairo", apt: "libcairo2-dev"),
        systemLibrary("CZBar", pkgConfig: "zbar", apt: "libzbar-dev"),
        systemLibrary("CPNG", pkgConfig: "libpng", apt: "libpng-dev"),
        // Nettle's SHA-256 for the web process's session and CSRF tokens (libnettle8 comes with GnuTLS, which
        // libcurl already brings); imported by WebInterface's SHA256 only.
        systemLibrary("CNettle", pkgConfig: "nettle", apt: "nettle-dev"),
        // V4L2, libjpeg, framebuffer and input-device helpers: imported by Camera, Imaging, Panel, Controls.
        .target(
            name: "CShim",
            linkerSettings: [.linkedLibrary("v4l2"), .linkedLibrary("jpeg")]
        ),
        // prctl, scheduling and eventfd for SwiftWingCore's system layer; imported by SwiftWingCore only.
        .target(name: "CLinux"),

        // Components, lowest first. Lower components never import higher ones.
        // The system layer (device threads, wake events, poll, EINTR, file operations) and shared value
        // types. May import: CLinux, Glibc, Synchronization.
        .target(name: "SwiftWingCore", dependencies: ["CLinux"]),
        // Scaling, rotation, JPEG. May import: SwiftWingCore, CJPEG, CShim.
        .target(
            name: "Imaging", dependencies: ["SwiftWingCore", "CShim", "CJPEG"],
            swiftSettings: optimisedInDebugBuilds),
        // Frames from V4L2 or a photo folder, on a device thread. May import: SwiftWingCore, Imaging, CV4L2,
        // CShim, Logging.
        .target(
            name: "Camera",
            dependencies: [
                "SwiftWingCore", "Imaging", "CShim", "CV4L2", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The queue and library in SQLite, the spool. May import: SwiftWingCore, GRDB, Logging, Foundation.
        .target(
            name: "Store",
            dependencies: [
                "SwiftWingCore",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Shutter inputs (GPIO, key devices) and feedback outputs. May import: SwiftWingCore, CGPIOD, CShim, Logging.
        .target(
            name: "Controls",
            dependencies: ["SwiftWingCore", "CGPIOD", "CShim", .product(name: "Logging", package: "swift-log")]
        ),
        // The backend link's pure core (SSE parser, tolerant models, ISBNs, retry policy): no Store, no GRDB; the
        // Uplink maps its books to library records. May import: SwiftWingCore (the ISBN), Foundation.
        .target(name: "Talaria", dependencies: ["SwiftWingCore"]),
        // HTTP over libcurl: one multi handle on its own thread; the uplink sees only `HTTPTransport`.
        // May import: SwiftWingCore, CCurl, Logging, Foundation.
        .target(
            name: "HTTPEngine",
            dependencies: ["SwiftWingCore", "CCurl", .product(name: "Logging", package: "swift-log")]
        ),
        // Queued scans to the backend and books into the library: upload, stream, poll, retry, cleanup; each landed
        // book's spine cut from the photo. May import: Store, Talaria, HTTPEngine, SwiftWingCore, Imaging, Logging,
        // ServiceLifecycle, Foundation, Synchronization.
        .target(
            name: "Uplink",
            dependencies: [
                "Store", "Talaria", "HTTPEngine", "SwiftWingCore", "Imaging",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // Barcodes (ZBar) and the quality check on a frame's Y plane; also reads PNG/JPEG files for `identify`.
        .target(
            name: "Identify", dependencies: ["SwiftWingCore", "Imaging", "CZBar", "CZXingShim", "CPNG"],
            swiftSettings: optimisedInDebugBuilds),
        // zxing-cpp (libzxing-dev) is C++ only: a C interface for the codes ZBar cannot read.
        .target(name: "CZXingShim", linkerSettings: [.linkedLibrary("ZXing")]),
        // The status panel drawn with Cairo into a framebuffer or PNG. May import: SwiftWingCore, CCairo, CShim,
        // Logging, Foundation.
        .target(
            name: "Panel",
            dependencies: ["SwiftWingCore", "CCairo", "CShim", .product(name: "Logging", package: "swift-log")],
            swiftSettings: optimisedInDebugBuilds
        ),
        // What the daemon shares with the CLI and swiftwing-web: the configuration and its loader, the control
        // messages and client, library management, the status report. No device C library, so swiftwing-web links
        // none. May import: SwiftWingCore, Store, Talaria, Logging, TOMLKit, Foundation, Glibc.
        .target(
            name: "ApplianceCore",
            dependencies: [
                "SwiftWingCore", "Store", "Talaria",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "TOMLKit", package: "TOMLKit"),
            ]
        ),
        // The daemon, its control socket server and reports; re-exports ApplianceCore. May import: every component
        // above, CSystemd (in System/, its wrapper) but no other C module (library versions come from the wrappers),
        // Logging, ServiceLifecycle, Foundation.
        .target(
            name: "Appliance",
            dependencies: [
                "ApplianceCore", "SwiftWingCore", "Imaging", "Camera", "Store", "Controls", "Panel", "Talaria",
                "HTTPEngine", "Uplink", "CSystemd", "Identify",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The command line. May import: Appliance, Identify, SwiftWingCore (QualityThresholds), ArgumentParser, Logging,
        // Foundation.
        .executableTarget(
            name: "swiftwing",
            dependencies: [
                "Appliance", "Identify", "Store", "SwiftWingCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            linkerSettings: [
                .unsafeFlags(
                    residentCodeLinkerFlags(order: "hot-functions.order"),
                    .when(platforms: [.linux], configuration: .release))
            ]
        ),
        // The library in a browser: pages, pairing and sessions, the daemon over its control socket, changes through
        // ApplianceCore's library management. May import: ApplianceCore, Store, SwiftWingCore, Imaging,
        // CNettle (SHA256.swift), HTTPEngine (BookSearch.swift: the recognizer's book search on loopback), GRDB,
        // Hummingbird(Core), NIOCore, NIOPosix (its thread pool for blocking reads), Mustache, ServiceLifecycle,
        // Logging, Foundation.
        .target(
            name: "WebInterface",
            dependencies: [
                "ApplianceCore", "Store", "SwiftWingCore", "Imaging", "CNettle", "HTTPEngine",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // `swiftwing-web`: a process of its own, so the daemon never depends on it. May import: WebInterface,
        // ApplianceCore, ArgumentParser, Logging, Foundation.
        .executableTarget(
            name: "swiftwing-web",
            dependencies: [
                "WebInterface", "ApplianceCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            linkerSettings: [
                .unsafeFlags(
                    residentCodeLinkerFlags(order: "web-hot-functions.order"),
                    .when(platforms: [.linux], configuration: .release))
            ]
        ),
        // Benchmarks and probes import the modules they measure, and the C library a baseline needs.
        .executableTarget(
            name: "SwiftWingBench",
            dependencies: ["SwiftWingCore", "Imaging", "Store", "CTurboJPEG"],
            path: "Benchmarks/SwiftWingBench"
        ),
        .executableTarget(
            name: "ControlsBench", dependencies: ["Controls", "SwiftWingCore", "CShim"],
            path: "Benchmarks/ControlsBench",
            exclude: ["README.md"]),
        .executableTarget(
            name: "TalariaBench",
            dependencies: ["Talaria"],
            path: "Benchmarks/TalariaBench",
            exclude: ["compare-eventsource.sh", "EventSourceLinuxShim.swift"]
        ),
        .executableTarget(
            name: "UplinkBench",
            dependencies: [
                "Uplink", "Store", "Talaria", "HTTPEngine", "Imaging", "SwiftWingCore",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/UplinkBench"),
        // The export against CSV.swift's writer and against reading the rows, in one run; `seed` fills a
        // state directory with known books for the VM rig's export test.
        .executableTarget(
            name: "ExportBench",
            dependencies: ["Store", "Imaging", "SwiftWingCore", .product(name: "CSV", package: "CSV.swift")],
            path: "Benchmarks/ExportBench"),
        .executableTarget(
            name: "PanelBench",
            dependencies: ["Panel", "Imaging", "SwiftWingCore", .product(name: "Logging", package: "swift-log")],
            path: "Benchmarks/PanelBench"),
        .executableTarget(
            name: "IdentifyBench", dependencies: ["Identify", "Imaging", "SwiftWingCore"],
            path: "Benchmarks/IdentifyBench"),
        // Renders panel states into a framebuffer device and/or PNGs: the VM rig's vfb test drives it.
        .executableTarget(name: "PanelProbe", dependencies: ["Panel"], path: "Tests/PanelProbe"),
        // Writes the synthetic camera's barcode and blurred scenes for scripts/demo.sh.
        .executableTarget(
            name: "DemoScenes", dependencies: ["SwiftWingTesting", "SwiftWingCore", "Identify", "Imaging"],
            path: "Tests/DemoScenes"),

        // libFuzzer targets (Fuzz/README.md): scripts/fuzz.sh builds them with -sanitize=fuzzer -DFUZZING;
        // an ordinary build makes each a replay tool for inputs it found.
        .target(name: "FuzzSupport", path: "Fuzz/FuzzSupport"),
        .executableTarget(name: "FuzzSSE", dependencies: ["FuzzSupport", "Talaria"], path: "Fuzz/FuzzSSE"),
        .executableTarget(
            name: "FuzzStreamEvents", dependencies: ["FuzzSupport", "Talaria", "SwiftWingCore"],
            path: "Fuzz/FuzzStreamEvents"),
        .executableTarget(
            name: "FuzzUploadEnvelope", dependencies: ["FuzzSupport", "Talaria"], path: "Fuzz/FuzzUploadEnvelope"),
        .executableTarget(
            name: "FuzzConfiguration", dependencies: ["FuzzSupport", "Appliance"], path: "Fuzz/FuzzConfiguration"),
        .executableTarget(
            name: "FuzzControlMessages", dependencies: ["FuzzSupport", "Appliance"], path: "Fuzz/FuzzControlMessages"),
        .executableTarget(
            name: "FuzzMountTable", dependencies: ["FuzzSupport", "SwiftWingCore"], path: "Fuzz/FuzzMountTable"),
        .executableTarget(
            name: "FuzzMultipart", dependencies: ["FuzzSupport", "TalariaReferenceServer"], path: "Fuzz/FuzzMultipart"),
        .executableTarget(
            name: "FuzzWebInput", dependencies: ["FuzzSupport", "WebInterface"], path: "Fuzz/FuzzWebInput"),
        .executableTarget(
            name: "FuzzCatalogueCSV", dependencies: ["FuzzSupport", "Recognition"], path: "Fuzz/FuzzCatalogueCSV"),
        .executableTarget(
            name: "FuzzUdevProperties", dependencies: ["FuzzSupport", "Store"], path: "Fuzz/FuzzUdevProperties"),
        .executableTarget(
            name: "FuzzJPEGHeader", dependencies: ["FuzzSupport", "TalariaReferenceServer"],
            path: "Fuzz/FuzzJPEGHeader"),

        // Test doubles ship as their own module and implement the same protocols as the real parts.
        .target(
            name: "SwiftWingTesting",
            dependencies: [
                "SwiftWingCore", "Camera", "Imaging", "Controls", "HTTPEngine", "Uplink", "Panel", "Store",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/SwiftWingTesting"),

        // The reference recognition backend (docs/protocol.md with switchable faults): an independent peer,
        // it never imports the app's modules. May import: Hummingbird, NIOCore, MultipartKit, Logging,
        // ServiceLifecycle, Foundation.
        .target(
            name: "TalariaReferenceServer",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The backend's command line. May import: TalariaReferenceServer, ArgumentParser, Logging, Foundation.
        .executableTarget(
            name: "talaria-reference",
            dependencies: [
                "TalariaReferenceServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The recognizer's stages: catalogue import and index (SQLite FTS5 through GRDB), spine grouping, matching
        // and assignment, the OCR worker's supervisor. Like the reference backend it never imports the device's
        // modules. May import: SwiftWingCore (the child process's spawn), GRDB, CSV, Logging, Foundation.
        .target(
            name: "Recognition",
            dependencies: [
                "SwiftWingCore",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "CSV", package: "CSV.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The recognizer's command line and service: `serve` is the reference backend's protocol with the real
        // recognizer plugged in. May import: Recognition, TalariaReferenceServer, Hummingbird, ArgumentParser,
        // Logging, Foundation.
        .executableTarget(
            name: "swiftwing-recognizer",
            dependencies: [
                "Recognition", "TalariaReferenceServer", "HTTPEngine", "SwiftWingCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "RecognitionTests", dependencies: ["Recognition", "swiftwing-recognizer"], exclude: ["Fixtures"]),
        // The recognizer service's logic with a double of the whole-photo recognizer, its open-set lookup against the
        // reference server's search on loopback, and the `serve` executable's start-up checks.
        .testTarget(
            name: "RecognizerServiceTests",
            dependencies: [
                "swiftwing-recognizer", "Recognition", "TalariaReferenceServer", "HTTPEngine", "SwiftWingTesting",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // Tests of the backend over real loopback HTTP. May import: TalariaReferenceServer, Hummingbird, NIOCore,
        // ServiceLifecycle, Logging, Foundation, Testing.
        .testTarget(
            name: "TalariaReferenceTests",
            dependencies: [
                "TalariaReferenceServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        // Each test target imports the module it tests, SwiftWingTesting's doubles and what its fixtures need.
        .testTarget(name: "SwiftWingCoreTests", dependencies: ["SwiftWingCore", "SwiftWingTesting"]),
        .testTarget(name: "ImagingTests", dependencies: ["Imaging", "SwiftWingCore", "SwiftWingTesting"]),
        .testTarget(name: "CameraTests", dependencies: ["Camera", "SwiftWingCore", "SwiftWingTesting"]),
        .testTarget(
            name: "StoreTests",
            dependencies: [
                "Store", "SwiftWingCore", "SwiftWingTesting", .product(name: "CSV", package: "CSV.swift"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]),
        .testTarget(name: "ControlsTests", dependencies: ["Controls", "CShim", "SwiftWingCore", "SwiftWingTesting"]),
        .testTarget(
            name: "UplinkTests",
            dependencies: [
                "Uplink", "Store", "Talaria", "HTTPEngine", "SwiftWingTesting", "Imaging",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "TalariaTests", dependencies: ["Talaria", "SwiftWingCore", "SwiftWingTesting"], exclude: ["Fixtures"]),
        .testTarget(
            name: "HTTPEngineTests",
            dependencies: [
                "HTTPEngine", "CCurl", "SwiftWingCore", "SwiftWingTesting",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "PanelTests",
            dependencies: [
                "Panel", "SwiftWingCore", "SwiftWingTesting", .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["Golden"]),
        .testTarget(
            name: "IdentifyTests",
            dependencies: ["Identify", "CZXingShim", "Imaging", "SwiftWingCore", "SwiftWingTesting", "swiftwing"]),
        .testTarget(
            name: "ApplianceTests",
            dependencies: [
                "Appliance", "Camera", "Controls", "Identify", "Imaging", "Panel", "Store", "SwiftWingCore",
                "SwiftWingTesting", .product(name: "Logging", package: "swift-log"),
            ]),
        // The web process over real loopback HTTP with a real SQLite file and a real control socket.
        .testTarget(
            name: "WebInterfaceTests",
            dependencies: [
                "WebInterface", "Appliance", "Store", "Imaging", "SwiftWingCore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        .testTarget(
            name: "SwiftWingIntegrationTests",
            dependencies: [
                "Imaging", "Identify", "Store", "SwiftWingCore", "SwiftWingTesting", "swiftwing", "talaria-reference",
                "swiftwing-recognizer", "swiftwing-web",
                "Uplink", "HTTPEngine", "Talaria", .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ]
)

// Warnings are errors in the project's own targets; dependencies keep their warnings.
for target in package.targets where [.regular, .executable, .test].contains(target.type) {
    target.swiftSettings = (target.swiftSettings ?? []) + [.treatAllWarnings(as: .error)]
}
