"""The timer (docs/timing.md): statistics and stopping rule (`stats`), cache
flushing (`flush`), one sample by method (`timers`), one side of a timed case in
a worker (`side`), clock and temperature readings (`sensors`), and an in-process
driver of interleaved rounds (`rounds`) for tests and bench scripts; the engine
drives the same rounds across the reference and candidate workers."""
