"""Drives an SQS endpoint with boto3 through what issue 32 added: FIFO and fair queues, late delete, system
attributes and selectors, permissions and message move tasks.

    python3 boto3_fidelity.py ENDPOINT_URL ACCESS_KEY_ID SECRET PRINCIPAL

Prints OK and exits 0 when every step got SQS's answer; otherwise fails with the step that did not.
"""
import sys
import time
import uuid

import boto3
from botocore.exceptions import ClientError

endpoint, key_id, secret, principal = sys.argv[1:5]
sqs = boto3.client("sqs", endpoint_url=endpoint, region_name="us-east-1",
                   aws_access_key_id=key_id, aws_secret_access_key=secret)
run = uuid.uuid4().hex[:8]


def code(call, **kwargs):
    try:
        call(**kwargs)
    except ClientError as e:
        return e.response["Error"]["Code"]
    raise AssertionError("%s succeeded" % call)


def arn(url):
    return sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]


# ---- FIFO
fifo = sqs.create_queue(QueueName="boto3-fifo-%s.fifo" % run, Attributes={"FifoQueue": "true"})["QueueUrl"]
attrs = sqs.get_queue_attributes(QueueUrl=fifo, AttributeNames=["All"])["Attributes"]
assert attrs["FifoQueue"] == "true" and attrs["ContentBasedDeduplication"] == "false", attrs
seq = {}
for i, group in enumerate(["A", "B", "A", "B"]):
    r = sqs.send_message(QueueUrl=fifo, MessageBody="%s%d" % (group, i), MessageGroupId=group,
                         MessageDeduplicationId="d%d" % i)
    seq[r["MessageId"]] = r["SequenceNumber"]
dup = sqs.send_message(QueueUrl=fifo, MessageBody="again", MessageGroupId="A", MessageDeduplicationId="d0")
assert dup["MessageId"] in seq, dup
got = sqs.receive_message(QueueUrl=fifo, MaxNumberOfMessages=10, AttributeNames=["All"],
                          ReceiveRequestAttemptId="attempt-1")["Messages"]
again = sqs.receive_message(QueueUrl=fifo, MaxNumberOfMessages=10, ReceiveRequestAttemptId="attempt-1")["Messages"]
assert [m["ReceiptHandle"] for m in again] == [m["ReceiptHandle"] for m in got], (got, again)
bodies = [m["Body"] for m in got]
assert [b for b in bodies if b.startswith("A")] == ["A0", "A2"], bodies
for m in got:
    a = m["Attributes"]
    assert a["SequenceNumber"] == seq[m["MessageId"]], m
    assert a["MessageGroupId"] == m["Body"][0] and a["MessageDeduplicationId"] == "d" + m["Body"][1:], m
    assert a["SenderId"] == principal, a
assert code(sqs.send_message, QueueUrl=fifo, MessageBody="x", MessageDeduplicationId="x") == "MissingParameter"
assert code(sqs.send_message, QueueUrl=fifo, MessageBody="x", MessageGroupId="g") == "InvalidParameterValue"
assert code(sqs.send_message, QueueUrl=fifo, MessageBody="x", MessageGroupId="g", MessageDeduplicationId="x",
            DelaySeconds=2) == "InvalidParameterValue"

# ---- fair queue: a MessageGroupId on a standard queue is the tenant, given back
fair = sqs.create_queue(QueueName="boto3-fair-%s" % run)["QueueUrl"]
sqs.send_message(QueueUrl=fair, MessageBody="tenant message", MessageGroupId="tenant-7")
m = sqs.receive_message(QueueUrl=fair, MessageSystemAttributeNames=["MessageGroupId"], WaitTimeSeconds=1)["Messages"][0]
assert m["Attributes"] == {"MessageGroupId": "tenant-7"}, m
assert code(sqs.send_message, QueueUrl=fair, MessageBody="x", MessageDeduplicationId="x") == "InvalidParameterValue"

# ---- late delete on a standard queue: the latest handle deletes after the visibility ended
late = sqs.create_queue(QueueName="boto3-late-%s" % run)["QueueUrl"]
sqs.send_message(QueueUrl=late, MessageBody="slow")
first = sqs.receive_message(QueueUrl=late, VisibilityTimeout=1, WaitTimeSeconds=1)["Messages"][0]
time.sleep(1.6)
sqs.delete_message(QueueUrl=late, ReceiptHandle=first["ReceiptHandle"])
assert sqs.receive_message(QueueUrl=late, WaitTimeSeconds=1).get("Messages", []) == []

# ---- system attributes, selectors, reserved names
attrq = sqs.create_queue(QueueName="boto3-attrs-%s" % run)["QueueUrl"]
header = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
sqs.send_message(QueueUrl=attrq, MessageBody="x", MessageAttributes={
    "Custom.a": {"DataType": "String", "StringValue": "1"},
    "Custom.b": {"DataType": "Number.int", "StringValue": "2"},
    "SenderId": {"DataType": "Binary", "BinaryValue": b"\x00\x01"}},
    MessageSystemAttributes={"AWSTraceHeader": {"DataType": "String", "StringValue": header}})
m = sqs.receive_message(QueueUrl=attrq, VisibilityTimeout=0, MessageAttributeNames=["Custom.*"],
                        MessageSystemAttributeNames=["All"], WaitTimeSeconds=1)["Messages"][0]
assert sorted(m["MessageAttributes"]) == ["Custom.a", "Custom.b"], m
assert m["MessageAttributes"]["Custom.b"] == {"DataType": "Number.int", "StringValue": "2"}, m
assert m["Attributes"]["AWSTraceHeader"] == header and m["Attributes"]["SenderId"] == principal, m
m = sqs.receive_message(QueueUrl=attrq, MessageAttributeNames=[".*"], WaitTimeSeconds=1)["Messages"][0]
assert m["MessageAttributes"]["SenderId"]["BinaryValue"] == b"\x00\x01", m
assert "Attributes" not in m, m

# ---- permissions: the Policy AddPermission writes
sqs.add_permission(QueueUrl=attrq, Label="BobSends", AWSAccountIds=["bob"], Actions=["SendMessage"])
policy = sqs.get_queue_attributes(QueueUrl=attrq, AttributeNames=["Policy"])["Attributes"]["Policy"]
assert "BobSends" in policy and "arn:aws:iam::bob:root" in policy, policy
assert code(sqs.add_permission, QueueUrl=attrq, Label="BobSends", AWSAccountIds=["bob"],
            Actions=["SendMessage"]) == "InvalidParameterValue"
sqs.remove_permission(QueueUrl=attrq, Label="BobSends")
assert "Policy" not in sqs.get_queue_attributes(QueueUrl=attrq, AttributeNames=["Policy"]).get("Attributes", {})

# ---- message move task: dead letters back to their source
dlq = sqs.create_queue(QueueName="boto3-dlq-%s" % run)["QueueUrl"]
src = sqs.create_queue(QueueName="boto3-src-%s" % run, Attributes={
    "RedrivePolicy": '{"deadLetterTargetArn":"%s","maxReceiveCount":"1"}' % arn(dlq)})["QueueUrl"]
for i in range(3):
    sqs.send_message(QueueUrl=src, MessageBody="dead-%d" % i)
for _ in range(10):
    sqs.receive_message(QueueUrl=src, MaxNumberOfMessages=10, VisibilityTimeout=0)
dead = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["ApproximateNumberOfMessages"])["Attributes"]
assert dead["ApproximateNumberOfMessages"] == "3", dead
m = sqs.receive_message(QueueUrl=dlq, VisibilityTimeout=0, MessageSystemAttributeNames=["DeadLetterQueueSourceArn"],
                        WaitTimeSeconds=1)["Messages"][0]
assert m["Attributes"]["DeadLetterQueueSourceArn"] == arn(src), m
handle = sqs.start_message_move_task(SourceArn=arn(dlq), MaxNumberOfMessagesPerSecond=100)["TaskHandle"]
for _ in range(100):
    tasks = sqs.list_message_move_tasks(SourceArn=arn(dlq), MaxResults=10)["Results"]
    if tasks[0]["Status"] == "COMPLETED":
        break
    time.sleep(0.1)
assert tasks[0]["Status"] == "COMPLETED" and tasks[0]["ApproximateNumberOfMessagesMoved"] == 3, tasks
assert code(sqs.cancel_message_move_task, TaskHandle=handle) == "AWS.SimpleQueueService.UnsupportedOperation"
back = []
for _ in range(10):
    back += sqs.receive_message(QueueUrl=src, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", [])
    if len(back) == 3:
        break
assert sorted(x["Body"] for x in back) == ["dead-0", "dead-1", "dead-2"], back

print("OK")
