import CV4L2

/// The V4L2 controls SwiftWing sets.
public enum CameraControl: String, CaseIterable, Hashable, Sendable {
    case focusAuto = "focus_auto"
    case focusAbsolute = "focus_absolute"
    case exposureAuto = "exposure_auto"
    case exposureAbsolute = "exposure_absolute"
    case zoomAbsolute = "zoom_absolute"
    case rotate = "rotate"

    /// The `V4L2_CID_…` number.
    public var id: UInt32 {
        switch self {
        case .focusAuto: return UInt32(V4L2_CID_FOCUS_AUTO)
        case .focusAbsolute: return UInt32(V4L2_CID_FOCUS_ABSOLUTE)
        case .exposureAuto: return UInt32(V4L2_CID_EXPOSURE_AUTO)
        case .exposureAbsolute: return UInt32(V4L2_CID_EXPOSURE_ABSOLUTE)
        case .zoomAbsolute: return UInt32(V4L2_CID_ZOOM_ABSOLUTE)
        case .rotate: return UInt32(V4L2_CID_ROTATE)
        }
    }
}

/// What `VIDIOC_QUERYCTRL` says about a control the camera has.
public struct ControlRange: Hashable, Sendable, CustomStringConvertible {
    public var minimum: Int32
    public var maximum: Int32
    public var step: Int32
    public var defaultValue: Int32

    public init(minimum: Int32, maximum: Int32, step: Int32 = 1, defaultValue: Int32 = 0) {
        self.minimum = minimum
        self.maximum = maximum
        self.step = max(step, 1)
        self.defaultValue = defaultValue
    }

    public func contains(_ value: Int32) -> Bool { (minimum...maximum).contains(value) }

    /// The nearest allowed value: clamped to the range, then down to a step.
    public func clamp(_ value: Int32) -> Int32 {
        let clamped = Int64(min(max(value, minimum), maximum))
        let offset = (clamped - Int64(minimum)) / Int64(step) * Int64(step)
        return Int32(Int64(minimum) + offset)
    }

    public var description: String {
        step == 1 ? "\(minimum)…\(maximum)" : "\(minimum)…\(maximum) in steps of \(step)"
    }
}

/// Which controls to set, in which order, and what to tell the operator: computed from the
/// configuration and the controls the camera has, without touching a device.
public struct ControlPlan: Hashable, Sendable {
    public struct Setting: Hashable, Sendable {
        public var control: CameraControl
        public var value: Int32

        public init(control: CameraControl, value: Int32) {
            self.control = control
            self.value = value
        }
    }

    public enum Note: Hashable, Sendable, CustomStringConvertible {
        /// Configured but the camera has no such control: skipped.
        case missing(CameraControl)
        /// Out of range: clamped.
        case clamped(CameraControl, requested: Int32, applied: Int32, range: ControlRange)
        /// The driver cannot rotate: the frames must be rotated in software.
        case softwareRotation(degrees: Int)
        /// Manual exposure is not among the exposure modes: the exposure time may be ignored.
        case noManualExposure(range: ControlRange)

        public var description: String {
            switch self {
            case .missing(let control):
                return "the camera has no \(control.rawValue) control; the setting is skipped"
            case .clamped(let control, let requested, let applied, let range):
                return "\(control.rawValue) = \(requested) is outside the camera's range \(range); using \(applied)"
            case .softwareRotation(let degrees):
                return "the driver cannot rotate (no V4L2_CID_ROTATE for \(degrees)°); rotate in software"
            case .noManualExposure(let range):
                return "exposure_auto has no manual mode (values \(range)); exposure_absolute may have no effect"
            }
        }
    }

    public var settings: [Setting] = []
    public var notes: [Note] = []
    /// Degrees still to rotate in software (0 when the driver rotates or no rotation is wanted).
    public var softwareRotationDegrees = 0

    public init(controls: CameraControls, rotation: CameraRotation, available: [CameraControl: ControlRange]) {
        // Autofocus must be off before an absolute focus sticks; the same for exposure.
        let focusAuto: Bool? = controls.focusAuto ?? (controls.focusAbsolute != nil ? false : nil)
        if let focusAuto {
            set(.focusAuto, focusAuto ? 1 : 0, available: available, reportMissing: controls.focusAuto != nil)
        }
        if let focus = controls.focusAbsolute {
            set(.focusAbsolute, focus, available: available)
        }
        if let exposure = controls.exposureAbsolute {
            let manual = Int32(V4L2_EXPOSURE_MANUAL.rawValue)
            if let range = available[.exposureAuto] {
                if range.contains(manual) {
                    settings.append(Setting(control: .exposureAuto, value: manual))
                } else {
                    notes.append(.noManualExposure(range: range))
                }
            }
            set(.exposureAbsolute, exposure, available: available)
        }
        if let zoom = controls.zoomAbsolute {
            set(.zoomAbsolute, zoom, available: available)
        }
        if rotation != .none {
            let degrees = Int32(rotation.degrees)
            if let range = available[.rotate], range.contains(degrees), range.clamp(degrees) == degrees {
                settings.append(Setting(control: .rotate, value: degrees))
            } else {
                softwareRotationDegrees = rotation.degrees
                notes.append(.softwareRotation(degrees: rotation.degrees))
            }
        }
    }

    private mutating func set(
        _ control: CameraControl, _ value: Int32, available: [CameraControl: ControlRange], reportMissing: Bool = true
    ) {
        guard let range = available[control] else {
            if reportMissing { notes.append(.missing(control)) }
            return
        }
        let applied = range.clamp(value)
        if applied != value {
            notes.append(.clamped(control, requested: value, applied: applied, range: range))
        }
        settings.append(Setting(control: control, value: applied))
    }
}
