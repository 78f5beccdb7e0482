/**
 * {@link dev.mailbox.sqs.SqsMailbox}: the Mailbox contract on AWS SQS (and on SQS-compatible servers
 * such as ElasticMQ and LocalStack) through the AWS SDK for Java v2.
 */
@NullMarked
package dev.mailbox.sqs;

import org.jspecify.annotations.NullMarked;
