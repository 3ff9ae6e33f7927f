import HTTPTypes
import Hummingbird
import NIOCore

/// `GET /api/events`: the feed's items as Server-Sent Events.
///
/// ```text
/// id: 42
/// event: version
/// data: {"key":"settings","version":7,"writtenAt":"2026-11-28T01:02:03.456Z","writtenAtMs":…}
///
/// id: 40
/// event: snapshot
/// data: [{"key":"settings","version":6,…},…]
/// ```
///
/// A browser's `EventSource` reconnects by itself with the id of the last event it received in
/// `Last-Event-ID`; ``VersionFeed/subscribe(after:)`` answers it with the events after it or a snapshot.
/// A comment line every ``pingInterval`` keeps idle connections open.
enum ServerSentEvents {
  /// How often an idle connection gets a comment line.
  static let pingInterval: Duration = .seconds(15)

  /// How long a browser waits before it reconnects (the `retry:` field).
  static let retryMilliseconds = 500

  static func response(feed: VersionFeed, after lastID: Int64?) -> Response {
    var headers = InspectorResponder.commonHeaders()
    headers[.contentType] = "text/event-stream; charset=utf-8"
    let stream = feed.subscribe(after: lastID)
    return Response(
      status: .ok, headers: headers,
      body: ResponseBody { writer in
        try await writer.write(ByteBuffer(string: "retry: \(retryMilliseconds)\n\n"))
        for await item in stream {
          try await writer.write(ByteBuffer(string: text(of: item)))
        }
        try await writer.finish(nil)
      })
  }

  /// One item as an event (or a comment line for a ping).
  static func text(of item: VersionFeed.Item) -> String {
    switch item {
    case .version(let id, let event):
      "id: \(id)\nevent: version\ndata: \(event.json.compact)\n\n"
    case .removed(let id, let key):
      "id: \(id)\nevent: removed\ndata: \(JSONValue.object([.init("key", .string(key))]).compact)\n\n"
    case .snapshot(let id, let keys):
      "id: \(id)\nevent: snapshot\ndata: \(keys)\n\n"
    case .ping:
      ": ping\n\n"
    }
  }
}
