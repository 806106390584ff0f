import Foundation
import Testing

@testable import TalariaReferenceServer

@Suite struct JobEndpointTests {
    @Test func statusAndResults() async throws {
        try await withServer({ $0.recognitionDelayMs = 1000 }) { server in
            let job = try await server.createJob(image: jpeg("status"))
            let status = try await server.request("GET", "/v3/jobs/scans/\(job.id)")
            #expect(status.status == 200)
            let data = try #require(status.object?["data"] as? [String: Any])
            #expect(data["jobId"] as? String == job.id)
            #expect(["queued", "processing"].contains(data["status"] as? String ?? ""))
            #expect(data["progress"] is Double)
            #expect(try await server.request("GET", "/v3/jobs/scans/\(job.id)/results").status == 404)
            #expect(try await server.waitFinished(job.id) == "completed")
            let results = try await server.request("GET", "/v3/jobs/scans/\(job.id)/results")
            let books = try #require((results.object?["data"] as? [String: Any])?["results"] as? [Any])
            #expect(books.count == Catalog.recognise(jpeg("status")).count)
            #expect(try await server.request("GET", "/v3/jobs/scans/nope").status == 404)

            try await server.queueFaults(["status:404", "status:500"])
            #expect(try await server.request("GET", "/v3/jobs/scans/\(job.id)").status == 404)
            #expect(try await server.request("GET", "/v3/jobs/scans/\(job.id)").status == 500)
            #expect(try await server.request("GET", "/v3/jobs/scans/\(job.id)").status == 200)
            #expect((try await server.stats()["statusPolls"] as? Int ?? 0) >= 5)
        }
    }

    @Test func cleanupThen404() async throws {
        try await withServer { server in
            let job = try await server.createJob()
            _ = try await server.waitFinished(job.id)
            try await server.queueFaults(["cleanup:500"])
            #expect(try await server.request("DELETE", "/v3/jobs/scans/\(job.id)/cleanup").status == 500)
            #expect(try await server.request("DELETE", "/v3/jobs/scans/\(job.id)/cleanup").status == 204)
            #expect(try await server.request("DELETE", "/v3/jobs/scans/\(job.id)/cleanup").status == 404)
            #expect(try await server.request("GET", "/v3/jobs/scans/\(job.id)/results").status == 404)
            let stats = try await server.stats()
            #expect(stats["cleanups"] as? [String] == [job.id])
            #expect(stats["cleanupsNotFound"] as? [String] == [job.id])
            // The idempotency key still maps to the same job: never a second one.
            #expect(try await server.createJob().id == job.id)
            #expect(try await server.stats()["jobsCreated"] as? Int == 1)
        }
    }

    @Test func cancelRunningThen409AfterFinish() async throws {
        try await withServer({ $0.recognitionDelayMs = 2000 }) { server in
            let running = try await server.createJob(key: "run")
            let cancel = try await server.request("DELETE", "/v3/jobs/scans/\(running.id)")
            #expect(cancel.status == 200)
            #expect(try await server.waitFinished(running.id) == "canceled")
            let events = parseSSE(try await server.stream(running.stream, token: running.token).text).events
            #expect(events.last?.event == "failed")
            #expect((events.last?.json?["error"] as? [String: Any])?["code"] as? String == "CANCELED")
            let again = try await server.request("DELETE", "/v3/jobs/scans/\(running.id)")
            #expect(again.status == 409)
            #expect(try await server.stats()["cancels"] as? Int == 1)
        }
        try await withServer { server in
            let done = try await server.createJob()
            #expect(try await server.waitFinished(done.id) == "completed")
            #expect(try await server.request("DELETE", "/v3/jobs/scans/\(done.id)").status == 409)
        }
    }

    @Test func resetClearsEverything() async throws {
        try await withServer { server in
            _ = try await server.createJob()
            try await server.queueFaults(["upload:500"])
            #expect(try await server.request("POST", "/_reset").status == 204)
            let stats = try await server.stats()
            #expect(stats["jobsCreated"] as? Int == 0 && stats["uploads"] as? Int == 0)
            #expect((stats["faultsPending"] as? [Any])?.isEmpty == true)
            #expect(try await server.upload().status == 202)
        }
    }
}
