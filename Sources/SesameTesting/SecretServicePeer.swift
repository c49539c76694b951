import FoundationEssentials
import Glibc

/// A real Secret Service provider for tests: a private D-Bus session bus (`dbus-daemon`) with
/// GNOME Keyring (`gnome-keyring-daemon --unlock --components=secrets`) on it, in a scratch
/// `HOME`, so nothing touches the user's keyring. Debian packages `dbus-daemon`, `gnome-keyring`
/// and `libsecret-tools` (for ``secretTool(_:input:)``).
///
/// Give ``environment`` to the processes under test: they reach this bus and no other. The
/// login keyring is created unlocked with ``password``; ``lock()`` locks it, and with no display
/// its unlock prompt cannot be shown, as when a person dismisses it.
public final class SecretServicePeer: Sendable {
    /// The password of the login keyring.
    public static let password = "sesame-test-keyring"

    /// `HOME`, `XDG_*` and `DBUS_SESSION_BUS_ADDRESS` for processes using this provider.
    public let environment: [String: String]
    /// The scratch home (the keyring files are under `data/keyrings`).
    public let home: URL
    private let runtime: String
    private let bus: ChildProcess
    private let keyring: ChildProcess

    /// Starts a private D-Bus session bus and gnome-keyring on it, with an unlocked login keyring
    /// in a scratch home.
    /// - Throws: when dbus-daemon or gnome-keyring is not installed, or they do not start.
    public init() async throws {
        for tool in ["/usr/bin/dbus-daemon", "/usr/bin/gnome-keyring-daemon", "/usr/bin/dbus-send"] {
            guard FileManager.default.isExecutableFile(atPath: tool) else {
                throw TestingError(
                    "\(tool) is not installed: scripts/install-deps.sh installs dbus-daemon, gnome-keyring and libsecret-tools"
                )
            }
        }
        home = try ScratchFolder.make("keyring-home")
        // Short: the keyring's control socket lives here, and socket paths are limited to 108 bytes.
        var template = Array("/tmp/sesame-kr-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw TestingError("mkdtemp failed") }
        runtime = String(cString: made)
        var base = [
            "PATH": "/usr/bin:/bin",
            "HOME": home.path,
            "XDG_DATA_HOME": home.appendingPathComponent("data").path,
            "XDG_CONFIG_HOME": home.appendingPathComponent("config").path,
            "XDG_RUNTIME_DIR": runtime,
        ]
        let busLog = home.appendingPathComponent("dbus.log").path
        let bus = try ChildProcess(
            executable: "/usr/bin/dbus-daemon",
            arguments: ["--session", "--nofork", "--nopidfile", "--print-address=1"],
            environment: base,
            logPath: busLog,
            errorPath: home.appendingPathComponent("dbus.err").path
        )
        self.bus = bus
        var keyring: ChildProcess?
        do {
            let printedAddress = {
                readText(busLog).split(separator: "\n").first { $0.hasPrefix("unix:") }.map(String.init)
            }
            let address = try await Self.poll(
                "dbus-daemon to print its address (\(busLog))",
                while: { bus.isRunning },
                printedAddress
            )
            base["DBUS_SESSION_BUS_ADDRESS"] = address
            keyring = try Self.startKeyring(home: home, environment: base)
            try await Self.waitForProvider(environment: base)
        } catch {
            if let keyring { keyring.stop() }
            bus.stop()
            throw error
        }
        guard let keyring else { throw TestingError("gnome-keyring-daemon did not start") }
        environment = base
        self.keyring = keyring
    }

    private static func startKeyring(home: URL, environment: [String: String]) throws -> ChildProcess {
        let input = home.appendingPathComponent("unlock").path
        try Data(Self.password.utf8).write(to: URL(fileURLWithPath: input))
        return try ChildProcess(
            executable: "/usr/bin/gnome-keyring-daemon",
            arguments: ["--foreground", "--unlock", "--components=secrets"],
            environment: environment,
            logPath: home.appendingPathComponent("keyring.log").path,
            inputPath: input
        )
    }

    private static func waitForProvider(environment: [String: String]) async throws {
        _ = try await Self.poll("gnome-keyring-daemon to own org.freedesktop.secrets") { () -> Bool? in
            let reply = try Self.run(
                "/usr/bin/dbus-send",
                [
                    "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                    "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.secrets",
                ],
                environment: environment
            )
            return reply.output.contains("boolean true") ? true : nil
        }
    }

    /// The process ID of the provider (to pause it with SIGSTOP: a provider that stops answering).
    public var providerPID: pid_t { keyring.pid }

    /// Locks the login keyring.
    public func lock() throws {
        let reply = try Self.run(
            "/usr/bin/dbus-send",
            [
                "--session", "--print-reply", "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets",
                "org.freedesktop.Secret.Service.Lock", "array:objpath:/org/freedesktop/secrets/collection/login",
            ],
            environment: environment
        )
        guard reply.status == 0, reply.output.contains("collection/login") else {
            throw TestingError("locking the login keyring failed: \(reply.output)")
        }
    }

    /// Runs `secret-tool` against this provider; `input` is its standard input (a secret to store).
    public func secretTool(_ arguments: [String], input: String? = nil) throws -> (status: Int32, output: String) {
        try Self.run("/usr/bin/secret-tool", arguments, environment: environment, input: input)
    }

    /// Stops both daemons and removes the scratch folders.
    public func shutdown() {
        kill(keyring.pid, SIGCONT)  // a paused provider would not see SIGTERM
        keyring.stop()
        bus.stop()
        try? FileManager.default.removeItem(at: home)
        try? FileManager.default.removeItem(atPath: runtime)
    }

    private static func run(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String],
        input: String? = nil
    ) throws -> (status: Int32, output: String) {
        let folder = try ScratchFolder.make("tool")
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = folder.appendingPathComponent("out").path
        var inputPath: String?
        if let input {
            inputPath = folder.appendingPathComponent("in").path
            try Data(input.utf8).write(to: URL(fileURLWithPath: folder.appendingPathComponent("in").path))
        }
        let child = try ChildProcess(
            executable: executable,
            arguments: arguments,
            environment: environment,
            logPath: log,
            inputPath: inputPath
        )
        let status = child.wait()
        return (status, readText(log))
    }

    /// Polls `probe` until it gives a value. A daemon that died is reported at once; the
    /// deadline is long (60 s) because each look waits for a concurrency thread, which a busy
    /// test process (hundreds of tests under ThreadSanitizer on two cores) may not give for many
    /// seconds although the daemon answered long before.
    private static func poll<Value>(
        _ what: String,
        while isAlive: () -> Bool = { true },
        _ probe: () throws -> Value?
    ) async throws -> Value {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if let value = try probe() { return value }
            guard isAlive() else { throw TestingError("\(what): the process exited first") }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestingError("timed out waiting for \(what)")
    }
}
