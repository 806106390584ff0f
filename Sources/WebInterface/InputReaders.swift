/// The web process's readers of what a browser sends (form bodies and query strings, the session cookie, the
/// pairing code, the Host header), public for Fuzz/FuzzWebInput: a fuzz target sees public API only.
public enum WebInputReaders {
    public static func formPairs(_ text: String) -> [(name: String, value: String)] { FormFields(parsing: text).pairs }
    public static func formDecode(_ text: String) -> String { FormFields.decode(text) }
    public static func formEncode(_ text: String) -> String { FormFields.encode(text) }
    public static func sessionToken(cookieHeader: String) -> String? { Session.token(inCookieHeader: cookieHeader) }
    public static func pairingCode(_ text: String) -> String? { WebApp.pairingCode(text) }
    public static func hostAllowed(_ authority: String) -> Bool { hostCheck.allows(authority) }
    public static func storedHash(of token: String) -> String { Session.storedHash(of: token) }

    private static let hostCheck = HostCheck(extra: ["kiosk.local"])
}
