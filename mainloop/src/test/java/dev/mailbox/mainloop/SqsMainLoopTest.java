package dev.mailbox.mainloop;

import dev.mailbox.testkit.sqs.ElasticMqServer;

/** The MainLoop suite on SQS, served by an embedded ElasticMQ on a loopback port. */
class SqsMainLoopTest extends MainLoopSuite {

    private static Backend backend;

    @Override
    protected Backend backend() {
        synchronized (SqsMainLoopTest.class) {
            if (backend == null) {
                backend = new Backend.Sqs(ElasticMqServer.shared().endpoint());
            }
            return backend;
        }
    }
}
