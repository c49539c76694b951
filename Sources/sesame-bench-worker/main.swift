import Glibc

// sesame-bench-worker: Sesame's client in sesame-bench's workloads (see Worker).
exit(await Worker.run(Array(CommandLine.arguments.dropFirst())))
