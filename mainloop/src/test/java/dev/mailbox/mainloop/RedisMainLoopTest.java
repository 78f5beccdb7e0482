package dev.mailbox.mainloop;

import dev.mailbox.testkit.redis.RedisServerProcess;

/** The MainLoop suite on a real redis-server the test starts (stopped by PID when the JVM exits). */
class RedisMainLoopTest extends MainLoopSuite {

    private static Backend backend;

    @Override
    protected Backend backend() {
        synchronized (RedisMainLoopTest.class) {
            if (backend == null) {
                RedisServerProcess server = RedisServerProcess.start();
                backend = new Backend.Redis(Backend.Redis.pooled(server.host(), server.port()), server.host(), server.port());
            }
            return backend;
        }
    }
}
