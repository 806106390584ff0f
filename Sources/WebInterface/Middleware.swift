import Foundation
import Hummingbird
import NIOCore
import SwiftWingCore

/// Headers on every answer: the pages run only their own script and style, load images only from here and
/// https covers, are never framed, sent as a referrer or cached; and how long the server took.
struct SecurityHeadersMiddleware: RouterMiddleware {
    typealias Context = WebRequestContext
    let app: WebApp

    static let policy =
        "default-src 'self'; img-src 'self' https:; object-src 'none'; base-uri 'none'; form-action 'self'; "
        + "frame-ancestors 'none'"

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let started = ContinuousClock.now
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = app.message("Refused", "\(error.status.code) \(error.status.reasonPhrase)", status: error.status)
        } catch {
            app.logger.error("web: request failed", metadata: ["error": "\(app.publicText("\(error)"))"])
            response = app.message("Error", "\(error)", status: .internalServerError)
        }
        response.headers[.contentSecurityPolicy] = Self.policy
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[HTTPFields.Element.Name("Referrer-Policy")!] = "no-referrer"
        response.headers[HTTPFields.Element.Name("X-Frame-Options")!] = "DENY"
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        // The time the server spent (to the start of the body), for the cost benchmark and a browser's dev tools.
        let milliseconds = (ContinuousClock.now - started).inSeconds * 1000
        response.headers[HTTPFields.Element.Name("Server-Timing")!] = "app;dur=" + String(format: "%.2f", milliseconds)
        return response
    }
}

/// Who may do what: without a paired session only the pairing page and the static files answer; every
/// change (POST) needs the session's CSRF token in its form; bodies are read up to the limit only.
struct AccessMiddleware: RouterMiddleware {
    typealias Context = WebRequestContext
    let app: WebApp

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var context = context
        let path = request.uri.path
        // DNS rebinding: a page on another site, its name made to resolve to the device, sends its own name.
        guard app.hosts.allows(request.head.authority) else {
            return app.message(
                "Refused",
                "This page answers to the device's own address or name, not to the name this request used: "
                    + "open it by the address on the panel.",
                status: .misdirectedRequest, paired: false)
        }
        guard request.method == .get || request.method == .head || request.method == .post else {
            return Response(status: .methodNotAllowed, headers: [.allow: "GET, HEAD, POST"])
        }
        if request.method == .post {
            var request = request
            let body: ByteBuffer
            do {
                body = try await request.collectBody(upTo: app.settings.limits.bodyBytes)
            } catch {
                return app.message(
                    "Too large", "The form is larger than \(app.settings.limits.bodyBytes) bytes.",
                    status: .contentTooLarge,
                    paired: false)
            }
            context.form = FormFields(parsing: String(buffer: body))
        }
        if path == "/pair", request.method == .post, Self.comesFromAnotherSite(request) {
            return app.message(
                "Refused",
                "The pairing form was sent from another site: open the device's own page (the panel's QR code) "
                    + "and press Pair there.", status: .forbidden, paired: false)
        }
        if path == "/pair" || path.hasPrefix("/static/") {
            return try await next(request, context)
        }
        let now = app.clock.now()
        let access = app.access
        let token = request.headers[.cookie].flatMap(Session.token(inCookieHeader:))
        var paired = false
        if let token {
            paired =
                (try? await blocking { try access.isValidSession(tokenHash: Session.storedHash(of: token), now: now) })
                ?? false
        }
        guard let token, paired else {
            if request.method == .post {
                return app.message(
                    "Not paired", "This browser is not paired with the device (or its pairing ended): pair it again.",
                    status: .unauthorized, paired: false)
            }
            return WebApp.redirect("/pair")
        }
        context.sessionToken = token
        if request.method == .post {
            guard let sent = context.form["csrf"], Session.same(sent, Session.csrfToken(for: token)) else {
                return app.message(
                    "Refused",
                    "The form did not carry this browser's check token (it is out of date, or came from "
                        + "another site): reload the page and try again.", status: .forbidden)
            }
        }
        return try await next(request, context)
    }

    /// Whether the browser says a form came from another site: its `Sec-Fetch-Site`, or else an `Origin` that is not
    /// this host (`Origin: null`, what the no-referrer policy makes of a same-origin form, says nothing either way).
    /// The pairing form has no session whose CSRF token could be checked: this keeps another site from pairing a
    /// browser, or spending the five tries, with a form of its own.
    static func comesFromAnotherSite(_ request: Request) -> Bool {
        if let site = request.headers[HTTPFields.Element.Name("Sec-Fetch-Site")!]?.lowercased() {
            return site != "same-origin" && site != "none"
        }
        guard let origin = request.headers[HTTPFields.Element.Name("Origin")!]?.lowercased(), origin != "null" else {
            return false
        }
        let originAuthority = origin.range(of: "://").map { String(origin[$0.upperBound...]) } ?? origin
        return originAuthority != request.head.authority?.lowercased()
    }
}
