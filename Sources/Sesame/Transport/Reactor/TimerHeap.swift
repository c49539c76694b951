/// Identifies a scheduled timer.
struct TimerHandle: Hashable, Sendable {
    let id: UInt64
}

/// A min-heap of deadlines. Cancelled entries are skipped when they reach the top, and the heap
/// is rebuilt without them once they outnumber the live ones: a timer set far ahead and
/// cancelled at once (a read's watchdog, a task's deadline) must not keep its closure alive until
/// its deadline, or the heap grows with the request rate.
struct TimerHeap {
    private struct Entry {
        let deadline: ContinuousClock.Instant
        let id: UInt64
        let work: () -> Void
    }

    private var heap: [Entry] = []
    private var live: Set<UInt64> = []
    private var nextID: UInt64 = 1

    mutating func schedule(at deadline: ContinuousClock.Instant, _ work: @escaping () -> Void) -> TimerHandle {
        let id = nextID
        nextID += 1
        heap.append(Entry(deadline: deadline, id: id, work: work))
        live.insert(id)
        siftUp(heap.count - 1)
        return TimerHandle(id: id)
    }

    mutating func cancel(_ handle: TimerHandle) {
        guard live.remove(handle.id) != nil else { return }
        if heap.count > 2 * live.count + 64 { compact() }
    }

    /// How many entries the heap holds, cancelled ones included (for tests).
    var storedCount: Int { heap.count }

    /// Drops every cancelled entry and restores the heap order (O(n); amortised over the
    /// cancellations that made it necessary).
    private mutating func compact() {
        heap.removeAll { !live.contains($0.id) }
        var index = heap.count / 2
        while index > 0 {
            index -= 1
            siftDown(index)
        }
    }

    /// The earliest deadline still scheduled (nil when none is).
    mutating func nextDeadline() -> ContinuousClock.Instant? {
        dropCancelled()
        return heap.first?.deadline
    }

    mutating func takeDue(now: ContinuousClock.Instant) -> [() -> Void] {
        var due: [() -> Void] = []
        while true {
            dropCancelled()
            guard let first = heap.first, first.deadline <= now else { return due }
            popFirst()
            live.remove(first.id)
            due.append(first.work)
        }
    }

    private mutating func dropCancelled() {
        while let first = heap.first, !live.contains(first.id) { popFirst() }
    }

    private mutating func popFirst() {
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        if !heap.isEmpty { siftDown(0) }
    }

    private mutating func siftUp(_ index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].deadline < heap[smallest].deadline { smallest = left }
            if right < heap.count, heap[right].deadline < heap[smallest].deadline { smallest = right }
            if smallest == parent { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
