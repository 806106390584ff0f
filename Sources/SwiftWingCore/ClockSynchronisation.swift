import CLinux

/// What the kernel knows about the wall clock's synchronisation.
public enum ClockSynchronisation {
    /// Whether the kernel's clock discipline (set by an NTP client such as systemd-timesyncd) calls
    /// the clock synchronised; `nil` when it cannot be read.
    public static var kernelSaysSynchronised: Bool? {
        switch sw_clock_is_synchronised() {
        case 1: true
        case 0: false
        default: nil
        }
    }
}
