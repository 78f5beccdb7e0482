"""A caller in Python: sends one MainLoop request with an X-Ray trace header and waits for the reply.

python3 boto3_traced_call.py ENDPOINT_URL REQUEST_QUEUE REPLY_QUEUE BODY AWS_TRACE_HEADER

Prints one JSON line: the reply's body and the trace context it came back with (its AWSTraceHeader system
attribute and its traceparent message attribute); exits 1 if no reply came within 30 seconds.
"""
import json
import sys
import time

import boto3

endpoint, request_queue, reply_queue, body, trace_header = sys.argv[1:6]
sqs = boto3.client("sqs", endpoint_url=endpoint, region_name="us-east-1",
                   aws_access_key_id="AKIDTRACING", aws_secret_access_key="not-checked")
request_url = sqs.get_queue_url(QueueName=request_queue)["QueueUrl"]
reply_url = sqs.get_queue_url(QueueName=reply_queue)["QueueUrl"]

sqs.send_message(QueueUrl=request_url, MessageBody=body, MessageSystemAttributes={
    "AWSTraceHeader": {"DataType": "String", "StringValue": trace_header}})

until = time.time() + 30
while time.time() < until:
    got = sqs.receive_message(QueueUrl=reply_url, WaitTimeSeconds=2, MessageAttributeNames=["All"],
                              MessageSystemAttributeNames=["AWSTraceHeader"]).get("Messages", [])
    if got:
        m = got[0]
        sqs.delete_message(QueueUrl=reply_url, ReceiptHandle=m["ReceiptHandle"])
        print(json.dumps({
            "body": m["Body"],
            "AWSTraceHeader": m.get("Attributes", {}).get("AWSTraceHeader"),
            "traceparent": m.get("MessageAttributes", {}).get("traceparent", {}).get("StringValue"),
        }))
        sys.exit(0)
print("no reply within 30 s", file=sys.stderr)
sys.exit(1)
