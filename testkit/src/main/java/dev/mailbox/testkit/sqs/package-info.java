/**
 * An SQS-compatible server for tests: {@link dev.mailbox.testkit.sqs.ElasticMqServer}, embedded
 * ElasticMQ on a free loopback port (needs ElasticMQ on the test classpath).
 */
@NullMarked
package dev.mailbox.testkit.sqs;

import org.jspecify.annotations.NullMarked;
