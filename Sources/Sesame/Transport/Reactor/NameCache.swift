/// The answers of recent name lookups, and the lookups in flight, shared by the whole process.
///
/// Concurrent requests to one host wait for one lookup instead of making one each, so that a
/// burst of requests to a new host does not queue one `getaddrinfo` call per request behind
/// ``BlockingWorkThreads``' few threads. An answer is then reused while it is younger than what the
/// caller accepts (a
/// session's `nameCacheLifetime`, as curl's DNS cache and the JVM's address cache keep theirs);
/// a connection that reaches none of the addresses forgets it.
///
/// Invariants:
/// - only successful answers are kept, at most `capacity` of them (the oldest goes first);
/// - every completion registered with a lookup is called exactly once, when that lookup ends,
///   outside the lock;
/// - a caller joins a lookup in flight only while it is younger than the age the caller accepts
///   for an answer; an older one (a name server that does not answer) is left to finish on its own
///   and a new lookup starts.
final class NameCache: Sendable {
    typealias Completion = @Sendable (Result<[SocketAddress], any Error>) -> Void

    /// What a caller does after ``join(host:port:maxAge:completion:)``.
    enum Join {
        /// An answer young enough came in meanwhile (`completion` is not kept).
        case answered([SocketAddress])
        /// Another caller's lookup is in flight: `completion` runs when it ends.
        case joined
        /// No usable lookup is in flight: the caller looks the name up and reports with
        /// ``finish(_:with:)``; `completion` runs then.
        case lookUp(LookupID)
    }

    struct LookupID: Hashable, Sendable {
        fileprivate let key: Key
        fileprivate let serial: Int
    }

    fileprivate struct Key: Hashable, Sendable {
        let host: String
        let port: Int
    }

    private struct Answer {
        let addresses: [SocketAddress]
        let time: ContinuousClock.Instant
    }

    private struct Lookup {
        let serial: Int
        let started: ContinuousClock.Instant
        var completions: [Completion]
    }

    private struct State {
        var answers: [Key: Answer] = [:]
        /// The newest lookup of each name; older ones still running are in `orphans`.
        var lookups: [Key: Lookup] = [:]
        var orphans: [Int: Lookup] = [:]
        var nextSerial = 0
    }

    /// The process's cache.
    static let shared = NameCache(capacity: 256)

    private let state = LockedValue(State())
    private let capacity: Int
    /// The time answers and lookups age by (``LoopClock/system`` unless a test moves its own).
    private let clock: LoopClock

    init(capacity: Int, clock: LoopClock = .system) {
        self.capacity = max(1, capacity)
        self.clock = clock
    }

    /// The answer for `host`:`port` when one is at most `maxAge` old.
    func answer(host: String, port: Int, maxAge: Duration) -> [SocketAddress]? {
        let key = Key(host: host.lowercased(), port: port)
        let now = clock.now
        return state.withLock { Self.freshAnswer(in: $0, key, now: now, maxAge: maxAge) }
    }

    private static func freshAnswer(
        in state: State,
        _ key: Key,
        now: ContinuousClock.Instant,
        maxAge: Duration
    ) -> [SocketAddress]? {
        guard let answer = state.answers[key], answer.time.duration(to: now) <= maxAge else { return nil }
        return answer.addresses
    }

    /// The answer for `host`:`port` if one at most `maxAge` old is kept; else registers
    /// `completion` with the lookup in flight, or with a new one that the caller makes.
    func join(host: String, port: Int, maxAge: Duration, completion: @escaping Completion) -> Join {
        let key = Key(host: host.lowercased(), port: port)
        let now = clock.now
        return state.withLock { state in
            if let addresses = Self.freshAnswer(in: state, key, now: now, maxAge: maxAge) {
                return .answered(addresses)
            }
            if var lookup = state.lookups[key], lookup.started.duration(to: now) <= maxAge {
                lookup.completions.append(completion)
                state.lookups[key] = lookup
                return .joined
            }
            if let stale = state.lookups.removeValue(forKey: key) { state.orphans[stale.serial] = stale }
            state.nextSerial += 1
            state.lookups[key] = Lookup(serial: state.nextSerial, started: now, completions: [completion])
            return .lookUp(LookupID(key: key, serial: state.nextSerial))
        }
    }

    /// Ends lookup `id`: keeps a successful answer and hands `result` to everyone who waits for it.
    func finish(_ id: LookupID, with result: Result<[SocketAddress], any Error>) {
        let now = clock.now
        let completions = state.withLock { state -> [Completion] in
            let lookup: Lookup?
            if state.lookups[id.key]?.serial == id.serial {
                lookup = state.lookups.removeValue(forKey: id.key)
            } else {
                lookup = state.orphans.removeValue(forKey: id.serial)
            }
            if case .success(let addresses) = result {
                if state.answers[id.key] == nil, state.answers.count >= capacity,
                    let oldest = state.answers.min(by: { $0.value.time < $1.value.time })?.key
                {
                    state.answers[oldest] = nil
                }
                state.answers[id.key] = Answer(addresses: addresses, time: now)
            }
            return lookup?.completions ?? []
        }
        for completion in completions { completion(result) }
    }

    /// Drops the answer for `host`:`port` (none of its addresses could be reached).
    func forget(host: String, port: Int) {
        let key = Key(host: host.lowercased(), port: port)
        _ = state.withLock { $0.answers.removeValue(forKey: key) }
    }

    /// How many answers are kept (for tests).
    var count: Int { state.withLock { $0.answers.count } }

    /// How many callers wait for the newest lookup of `host`:`port` (for tests).
    func waiting(host: String, port: Int) -> Int {
        let key = Key(host: host.lowercased(), port: port)
        return state.withLock { $0.lookups[key]?.completions.count ?? 0 }
    }
}
