"""boto3 against lading's S3 listener (run by test/s3/s3-clients-suite.ts with /usr/bin/python3).

Reads S3_URL (and S3_URL_2, another node or the same), AWS_ACCESS_KEY_ID and
AWS_SECRET_ACCESS_KEY; exits non-zero with the failing assertion.
"""
import base64
import hashlib
import os

import boto3
from botocore.client import Config
from botocore.exceptions import ClientError


def client(url):
    return boto3.client('s3', endpoint_url=url, region_name='us-east-1',
                        config=Config(s3={'addressing_style': 'path'}, retries={'max_attempts': 1}))


a = client(os.environ['S3_URL'])
b = client(os.environ.get('S3_URL_2', os.environ['S3_URL']))


def code_of(call):
    try:
        call()
    except ClientError as e:
        return e.response['Error']['Code']
    raise AssertionError('expected an error')


assert [x['Name'] for x in a.list_buckets()['Buckets']] == ['alice']
assert a.head_bucket(Bucket='alice')['ResponseMetadata']['HTTPStatusCode'] == 200
assert a.get_bucket_location(Bucket='alice').get('LocationConstraint') in (None, '')
# NOTE: another's home (or none) is refused alike, so that existence does not leak.
assert code_of(lambda: a.head_bucket(Bucket='nobody-here')) == '403'

body = b'0123456789' * 1000
put = a.put_object(Bucket='alice', Key='boto/a.txt', Body=body, Metadata={'Owner-Team': 'marine'})
assert put['ETag'] == '"%s"' % hashlib.md5(body).hexdigest(), put['ETag']
got = b.get_object(Bucket='alice', Key='boto/a.txt')
assert got['Body'].read() == body
assert got['Metadata']['owner-team'] == 'marine', got['Metadata']
assert got['ContentLength'] == len(body)

part = b.get_object(Bucket='alice', Key='boto/a.txt', Range='bytes=5-14')
assert part['ResponseMetadata']['HTTPStatusCode'] == 206
assert part['ContentRange'] == 'bytes 5-14/%d' % len(body), part['ContentRange']
assert part['Body'].read() == body[5:15]
assert b.get_object(Bucket='alice', Key='boto/a.txt', Range='bytes=-3')['Body'].read() == body[-3:]
assert code_of(lambda: b.get_object(Bucket='alice', Key='boto/a.txt', Range='bytes=999999-')) == 'InvalidRange'

etag = got['ETag']
assert code_of(lambda: b.get_object(Bucket='alice', Key='boto/a.txt', IfNoneMatch=etag)) == '304'
assert code_of(lambda: b.get_object(Bucket='alice', Key='boto/a.txt', IfMatch='"0000"')) == 'PreconditionFailed'
assert b.get_object(Bucket='alice', Key='boto/a.txt', IfMatch=etag)['Body'].read() == body
assert code_of(lambda: b.get_object(Bucket='alice', Key='boto/missing')) == 'NoSuchKey'
assert code_of(lambda: b.head_object(Bucket='alice', Key='boto/missing')) == '404'

wrong_md5 = base64.b64encode(hashlib.md5(b'other').digest()).decode()
assert code_of(lambda: a.put_object(Bucket='alice', Key='boto/bad.txt', Body=b'data', ContentMD5=wrong_md5)) == 'BadDigest'
assert code_of(lambda: a.head_object(Bucket='alice', Key='boto/bad.txt')) == '404', 'a refused body stores nothing'
right_md5 = base64.b64encode(hashlib.md5(b'data').digest()).decode()
a.put_object(Bucket='alice', Key='boto/good.txt', Body=b'data', ContentMD5=right_md5)
wrong_sha = base64.b64encode(hashlib.sha256(b'other').digest()).decode()
assert code_of(lambda: a.put_object(Bucket='alice', Key='boto/bad2.txt', Body=b'data', ChecksumSHA256=wrong_sha)) == 'BadDigest'

for i in range(7):
    a.put_object(Bucket='alice', Key='boto/page/k%02d' % i, Body=b'x')
a.put_object(Bucket='alice', Key='boto/page/sub/inner', Body=b'y')
keys, prefixes, token = [], [], None
while True:
    kw = {'Bucket': 'alice', 'Prefix': 'boto/page/', 'Delimiter': '/', 'MaxKeys': 3}
    if token:
        kw['ContinuationToken'] = token
    page = b.list_objects_v2(**kw)
    keys += [c['Key'] for c in page.get('Contents', [])]
    prefixes += [p['Prefix'] for p in page.get('CommonPrefixes', [])]
    if not page['IsTruncated']:
        break
    token = page['NextContinuationToken']
assert keys == ['boto/page/k%02d' % i for i in range(7)], keys
assert prefixes == ['boto/page/sub/'], prefixes
flat = b.list_objects_v2(Bucket='alice', Prefix='boto/page/')
assert [c['Key'] for c in flat['Contents']] == ['boto/page/k%02d' % i for i in range(7)] + ['boto/page/sub/inner']
after = b.list_objects_v2(Bucket='alice', Prefix='boto/page/', StartAfter='boto/page/k04')
assert [c['Key'] for c in after['Contents']] == ['boto/page/k05', 'boto/page/k06', 'boto/page/sub/inner']
v1 = b.list_objects(Bucket='alice', Prefix='boto/page/k', MaxKeys=4)
assert v1['IsTruncated'] and len(v1['Contents']) == 4
v1b = b.list_objects(Bucket='alice', Prefix='boto/page/k', Marker=v1['Contents'][-1]['Key'])
assert [c['Key'] for c in v1b['Contents']] == ['boto/page/k04', 'boto/page/k05', 'boto/page/k06']

copied = a.copy_object(Bucket='alice', Key='boto/copy/of-a.txt', CopySource={'Bucket': 'alice', 'Key': 'boto/a.txt'})
assert copied['CopyObjectResult']['ETag'] == etag
assert b.get_object(Bucket='alice', Key='boto/copy/of-a.txt')['Metadata']['owner-team'] == 'marine'

deleted = a.delete_objects(Bucket='alice', Delete={'Objects': [{'Key': 'boto/page/k%02d' % i} for i in range(7)] + [{'Key': 'boto/never'}]})
assert len(deleted['Deleted']) == 8, deleted
assert 'Contents' not in b.list_objects_v2(Bucket='alice', Prefix='boto/page/k')
a.delete_object(Bucket='alice', Key='boto/good.txt')
assert code_of(lambda: b.head_object(Bucket='alice', Key='boto/good.txt')) == '404'

big = os.urandom(6 * 1024 * 1024)
up = a.create_multipart_upload(Bucket='alice', Key='boto/multi.bin', Metadata={'kind': 'parts'})
uid = up['UploadId']
assert any(u['UploadId'] == uid for u in b.list_multipart_uploads(Bucket='alice').get('Uploads', []))
p2 = b.upload_part(Bucket='alice', Key='boto/multi.bin', UploadId=uid, PartNumber=2, Body=b'tail')
p1 = a.upload_part(Bucket='alice', Key='boto/multi.bin', UploadId=uid, PartNumber=1, Body=big)
listed = b.list_parts(Bucket='alice', Key='boto/multi.bin', UploadId=uid)
assert [(p['PartNumber'], p['Size']) for p in listed['Parts']] == [(1, len(big)), (2, 4)]
done = a.complete_multipart_upload(Bucket='alice', Key='boto/multi.bin', UploadId=uid, MultipartUpload={'Parts': [
    {'PartNumber': 1, 'ETag': p1['ETag']}, {'PartNumber': 2, 'ETag': p2['ETag']}]})
expect = hashlib.md5(hashlib.md5(big).digest() + hashlib.md5(b'tail').digest()).hexdigest() + '-2'
assert done['ETag'] == '"%s"' % expect, done
whole = b.get_object(Bucket='alice', Key='boto/multi.bin')
assert whole['Body'].read() == big + b'tail'
assert whole['Metadata']['kind'] == 'parts'
assert code_of(lambda: a.list_parts(Bucket='alice', Key='boto/multi.bin', UploadId=uid)) == 'NoSuchUpload'
up2 = a.create_multipart_upload(Bucket='alice', Key='boto/aborted.bin')
a.upload_part(Bucket='alice', Key='boto/aborted.bin', UploadId=up2['UploadId'], PartNumber=1, Body=b'x')
a.abort_multipart_upload(Bucket='alice', Key='boto/aborted.bin', UploadId=up2['UploadId'])
assert code_of(lambda: b.head_object(Bucket='alice', Key='boto/aborted.bin')) == '404'
up3 = a.create_multipart_upload(Bucket='alice', Key='boto/small.bin')
q1 = a.upload_part(Bucket='alice', Key='boto/small.bin', UploadId=up3['UploadId'], PartNumber=1, Body=b'a')
q2 = a.upload_part(Bucket='alice', Key='boto/small.bin', UploadId=up3['UploadId'], PartNumber=2, Body=b'b')
assert code_of(lambda: a.complete_multipart_upload(Bucket='alice', Key='boto/small.bin', UploadId=up3['UploadId'], MultipartUpload={'Parts': [
    {'PartNumber': 1, 'ETag': q1['ETag']}, {'PartNumber': 2, 'ETag': q2['ETag']}]})) == 'EntityTooSmall'
a.abort_multipart_upload(Bucket='alice', Key='boto/small.bin', UploadId=up3['UploadId'])

assert code_of(lambda: a.get_bucket_acl(Bucket='alice')) == 'NotImplemented'
assert code_of(lambda: a.put_object(Bucket='alice', Key='a//b', Body=b'x')) == 'InvalidArgument'
print('boto3 checks passed')
