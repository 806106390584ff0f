public enum SwiftWingVersion { public static let string = "0.1.0" }
