"""Drives an SQS endpoint with boto3: python3 boto3_scenario.py ENDPOINT_URL ACCESS_KEY_ID SECRET.

Prints OK and exits 0 when every step got SQS's answer; otherwise fails with the step that did not.
"""
import sys

import boto3
from botocore.exceptions import ClientError

endpoint, key_id, secret = sys.argv[1:4]
sqs = boto3.client("sqs", endpoint_url=endpoint, region_name="us-east-1",
                   aws_access_key_id=key_id, aws_secret_access_key=secret)

dlq = sqs.create_queue(QueueName="boto3-dlq")["QueueUrl"]
dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
url = sqs.create_queue(QueueName="boto3-orders", Attributes={
    "VisibilityTimeout": "30",
    "RedrivePolicy": '{"deadLetterTargetArn":"%s","maxReceiveCount":"1"}' % dlq_arn})["QueueUrl"]

sent = sqs.send_message(QueueUrl=url, MessageBody="order 1 ✓", MessageAttributes={
    "customer": {"DataType": "String", "StringValue": "c-42"},
    "total": {"DataType": "Number", "StringValue": "99.95"},
    "sig": {"DataType": "Binary", "BinaryValue": b"\x00\x01\xff"}})
assert "MD5OfMessageAttributes" in sent, sent

got = sqs.receive_message(QueueUrl=url, AttributeNames=["All"], MessageAttributeNames=["All"],
                          WaitTimeSeconds=2)["Messages"]
assert len(got) == 1, got
m = got[0]
assert m["Body"] == "order 1 ✓", m
assert m["MessageAttributes"]["total"] == {"DataType": "Number", "StringValue": "99.95"}, m
assert m["MessageAttributes"]["sig"]["BinaryValue"] == b"\x00\x01\xff", m
assert m["Attributes"]["ApproximateReceiveCount"] == "1", m

sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=60)
sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])

batch = sqs.send_message_batch(QueueUrl=url, Entries=[
    {"Id": "a", "MessageBody": "first"}, {"Id": "b", "MessageBody": "second"}])
assert sorted(e["Id"] for e in batch["Successful"]) == ["a", "b"], batch
got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=2)["Messages"]
while len(got) < 2:
    more = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=2).get("Messages", [])
    assert more, "the batch's second message never came"
    got += more
deleted = sqs.delete_message_batch(QueueUrl=url, Entries=[
    {"Id": "x%d" % i, "ReceiptHandle": g["ReceiptHandle"]} for i, g in enumerate(got)])
assert len(deleted["Successful"]) == 2 and not deleted.get("Failed"), deleted

# redrive: received once (and let go at once), the next receive moves it to the dead-letter queue
sqs.send_message(QueueUrl=url, MessageBody="poison")
first = sqs.receive_message(QueueUrl=url, VisibilityTimeout=0, WaitTimeSeconds=2)["Messages"]
assert first[0]["Body"] == "poison", first
again = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1).get("Messages", [])
assert again == [], again
dead = sqs.receive_message(QueueUrl=dlq, WaitTimeSeconds=2)["Messages"]
assert dead[0]["Body"] == "poison", dead

try:
    sqs.get_queue_url(QueueName="boto3-no-such-queue")
    raise AssertionError("a missing queue was found")
except ClientError as e:
    code = e.response["Error"]["Code"]
    assert code in ("AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist"), e.response
    assert e.response["ResponseMetadata"]["HTTPStatusCode"] == 400, e.response

print("OK")
