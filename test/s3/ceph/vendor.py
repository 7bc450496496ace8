"""Extracts the cases of ceph/s3-tests that concern the S3 operations lading serves, with the
module's helper functions, into test/s3/ceph/s3tests_port.py (run once, when refreshing the port)."""
import ast, re, sys
src = open('/tmp/test_s3.py').read()
tree = ast.parse(src)
lines = src.splitlines(keepends=True)
PREFIXES = ('test_bucket_list_', 'test_bucket_listv2_', 'test_object_write', 'test_object_read', 'test_object_head', 'test_object_copy',
            'test_copy_object', 'test_multipart_upload', 'test_multipart_use', 'test_abort_multipart', 'test_list_multipart',
            'test_ranged_request', 'test_get_object_if', 'test_object_set_get', 'test_object_metadata', 'test_atomic_',
            'test_bucket_head', 'test_list_buckets', 'test_multi_object_delete', 'test_object_delete', 'test_put_object', 'test_get_object',
            'test_object_checksum', 'test_multipart_checksum', 'test_bucket_get_location', 'test_object_requestid', 'test_object_anon')
SKIP = ('acl', 'policy', 'version', 'lock', 'tagging', 'encryption', 'sse', 'lifecycle', 'logging', 'torrent', 'website', 'cors', 'notification')
out = []
chosen = []
for node in tree.body:
    if isinstance(node, ast.FunctionDef):
        start = (node.decorator_list[0].lineno if node.decorator_list else node.lineno) - 1
        body = ''.join(lines[node.lineno - 1:node.end_lineno])
        if node.name.startswith('test_'):
            if not node.name.startswith(PREFIXES) or any(s in node.name for s in SKIP):
                continue
            chosen.append(node.name)
        out.append(body + '\n')
    elif isinstance(node, (ast.Assign, ast.ClassDef)):
        out.append(''.join(lines[node.lineno - 1:node.end_lineno]) + '\n')
header = '''# A port of the cases of ceph/s3-tests (https://github.com/ceph/s3-tests, commit 8f0ae7b,
# s3tests/functional/test_s3.py) that concern the S3 operations lading serves: listings, object
# reads and writes, ranges, conditionals, metadata, copies, deletes and multipart uploads, with the
# module's helper functions, copied unchanged (decorators dropped). Extracted by
# test/s3/ceph/vendor.py; run by test/s3/ceph-s3-tests.test.ts through run_port.py, which
# provides the module's imports (s3tests_shim.py).
#
# Copyright (c) 2011 New Dream Network, LLC. MIT licence (see test/s3/ceph/LICENSE).
from s3tests_shim import *  # noqa: F401,F403
from s3tests_shim import _get_status, _get_status_and_error_code  # noqa: F401

'''
open('/work/wt/s3/test/s3/ceph/s3tests_port.py', 'w').write(header + ''.join(out))
open('/work/wt/s3/test/s3/ceph/cases.txt', 'w').write('\n'.join(chosen) + '\n')
print(len(chosen))
