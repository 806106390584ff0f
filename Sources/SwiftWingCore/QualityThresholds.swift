/// Where a frame stops being good enough to upload. Calibrated on the repository's shelf and
/// barcode photos and on blurred and darkened versions of them (Benchmarks/README.md, "Identify").
public struct QualityThresholds: Sendable, Hashable, Codable {
    /// Least Laplacian variance of a sharp frame (`imaging.min_sharpness`).
    public var minimumSharpness: Double
    /// Least mean luma of a usable frame (`imaging.min_mean_level`).
    public var minimumMeanLevel: Double
    /// Most of the frame that may be crushed to black (`imaging.max_shadow_fraction`).
    public var maximumShadowFraction: Double
    /// Most of the frame that may be blown to white (`imaging.max_highlight_fraction`).
    public var maximumHighlightFraction: Double

    public init(
        minimumSharpness: Double = 75, minimumMeanLevel: Double = 45,
        maximumShadowFraction: Double = 0.5, maximumHighlightFraction: Double = 0.5
    ) {
        self.minimumSharpness = minimumSharpness
        self.minimumMeanLevel = minimumMeanLevel
        self.maximumShadowFraction = maximumShadowFraction
        self.maximumHighlightFraction = maximumHighlightFraction
    }
}
