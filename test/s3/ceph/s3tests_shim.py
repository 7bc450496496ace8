"""What ceph/s3-tests' test module imports, for the port in s3tests_port.py, pointed at a lading
S3 listener: the names of its imports, its `utils` helpers (copied), and its configuration
helpers rewritten. lading's buckets are users' homes, made with the users, so "new" buckets
come from a pool the test file prepared (users whose homes the main user may write), named in
S3_BUCKETS. Helpers for what lading does not serve (IAM, STS, tenants, KMS) raise."""
# pylint: disable=unused-import
import base64
import datetime
import email.utils
import hashlib
import hmac
import json
import itertools
import logging
import operator
import os
import random
import re
import socket
import ssl
import string
import threading
import time
import xml.etree.ElementTree as ET
from collections import OrderedDict, defaultdict, namedtuple
from io import BytesIO

import boto3
import botocore.config
import botocore.session
import dateutil.parser
import pytz
import requests
from botocore import UNSIGNED
from botocore.client import Config
from botocore.exceptions import ClientError, ParamValidationError
from botocore.handlers import validate_bucket_name


class _Anything:
    """Stands for pytest's marks: any attribute, any call, a decorator that changes nothing."""
    def __getattr__(self, name):
        return self

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]
        return self


class Skipped(Exception):
    """pytest.skip: the case does not apply."""


class _Raises:
    def __init__(self, expected):
        self.expected = expected
        self.value = None

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        if kind is None:
            raise AssertionError('did not raise %s' % (self.expected,))
        if not issubclass(kind, self.expected):
            return False
        self.value = value
        return True


class _Pytest:
    mark = _Anything()

    @staticmethod
    def skip(reason=''):
        raise Skipped(reason)

    @staticmethod
    def raises(expected, *args, **kwargs):
        return _Raises(expected)

    @staticmethod
    def param(*values, **kwargs):
        return values


pytest = _Pytest()

ENDPOINT = os.environ['S3_URL']
MAIN = (os.environ['AWS_ACCESS_KEY_ID'], os.environ['AWS_SECRET_ACCESS_KEY'])
ALT = (os.environ['ALT_ACCESS_KEY_ID'], os.environ['ALT_SECRET_ACCESS_KEY'])
_POOL = os.environ['S3_BUCKETS'].split(',')
_NEXT = [0]


# -- from s3tests/functional/utils.py (unchanged) --
def assert_raises(excClass, callableObj, *args, **kwargs):
    """
    Like unittest.TestCase.assertRaises, but returns the exception.
    """
    try:
        callableObj(*args, **kwargs)
    except excClass as e:
        return e
    else:
        if hasattr(excClass, '__name__'):
            excName = excClass.__name__
        else:
            excName = str(excClass)
        raise AssertionError("%s not raised" % excName)


def generate_random(size, part_size=5*1024*1024):
    """
    Generate the specified number random data.
    (actually each MB is a repetition of the first KB)
    """
    chunk = 1024
    allowed = string.ascii_letters
    for x in range(0, size, part_size):
        strpart = ''.join([allowed[random.randint(0, len(allowed) - 1)] for _ in range(chunk)])
        s = ''
        left = size - x
        this_part_size = min(left, part_size)
        for y in range(this_part_size // chunk):
            s = s + strpart
        s = s + strpart[:(this_part_size % chunk)]
        yield s
        if (x == size):
            return


def _get_status(response):
    status = response['ResponseMetadata']['HTTPStatusCode']
    return status


def _get_status_and_error_code(response):
    status = response['ResponseMetadata']['HTTPStatusCode']
    error_code = response['Error']['Code']
    return status, error_code


# -- s3tests/functional/__init__.py's helpers, for lading --
def _client(key, secret, config=None):
    return boto3.client(service_name='s3', aws_access_key_id=key, aws_secret_access_key=secret, endpoint_url=ENDPOINT,
                        region_name='us-east-1', config=config or Config(signature_version='s3v4', s3={'addressing_style': 'path'}))


def get_client(client_config=None):
    return _client(MAIN[0], MAIN[1], client_config)


def get_v2_client():
    return get_client()


def get_alt_client(client_config=None):
    return _client(ALT[0], ALT[1], client_config)


def get_unauthenticated_client():
    return _client('', '', Config(signature_version=UNSIGNED, s3={'addressing_style': 'path'}))


def get_bad_auth_client(aws_access_key_id='badauth'):
    return _client(aws_access_key_id, 'roflmao')


def get_prefix():
    return 'cephb'


def get_new_bucket_name():
    name = _POOL[_NEXT[0] % len(_POOL)]
    _NEXT[0] += 1
    return name


def get_new_bucket(client=None, name=None):
    client = client or get_client()
    name = name or get_new_bucket_name()
    client.create_bucket(Bucket=name)
    return name


def get_new_bucket_resource(name=None):
    s3 = boto3.resource('s3', aws_access_key_id=MAIN[0], aws_secret_access_key=MAIN[1], endpoint_url=ENDPOINT, region_name='us-east-1')
    bucket = s3.Bucket(name or get_new_bucket_name())
    bucket.create()
    return bucket


def get_buckets_list(client=None, prefix=None):
    client = client or get_client()
    prefix = prefix or get_prefix()
    return [b['Name'] for b in client.list_buckets()['Buckets'] if prefix in b['Name']]


def get_objects_list(bucket, client=None, prefix=None):
    client = client or get_client()
    response = client.list_objects(Bucket=bucket) if prefix is None else client.list_objects(Bucket=bucket, Prefix=prefix)
    return [o['Key'] for o in response.get('Contents', [])]


def nuke_prefixed_buckets(prefix, client=None):
    pass


def configured_storage_classes():
    return ['STANDARD']


def configure():
    pass


def get_config_is_secure():
    return False


def get_config_host():
    return ENDPOINT.split('//')[1].split(':')[0]


def get_config_port():
    return int(ENDPOINT.rsplit(':', 1)[1])


def get_config_endpoint():
    return ENDPOINT


def get_config_ssl_verify():
    return False


def get_main_aws_access_key():
    return MAIN[0]


def get_main_aws_secret_key():
    return MAIN[1]


def get_main_display_name():
    return os.environ.get('MAIN_USER', 'alice')


def get_main_user_id():
    return os.environ.get('MAIN_USER', 'alice')


def get_main_email():
    return ''


def get_main_api_name():
    return ''


def get_alt_aws_access_key():
    return ALT[0]


def get_alt_aws_secret_key():
    return ALT[1]


def get_alt_display_name():
    return os.environ.get('ALT_USER', 'bob')


def get_alt_user_id():
    return os.environ.get('ALT_USER', 'bob')


def get_alt_email():
    return ''


def _not_served(*args, **kwargs):
    raise NotImplementedError('not a part of lading (IAM, STS, tenants, KMS, cloud tiers)')


for _name in ('get_iam_client', 'get_iam_s3client', 'get_iam_root_client', 'get_iam_root_s3client', 'get_iam_alt_root_client',
              'get_sts_client', 'get_tenant_client', 'get_v2_tenant_client', 'get_tenant_iam_client', 'get_alt_iam_client',
              'get_cloud_client', 'get_svc_client', 'get_main_kms_keyid', 'get_secondary_kms_keyid', 'get_tenant_name',
              'get_tenant_user_id', 'get_tenant_aws_access_key', 'get_tenant_aws_secret_key', 'get_tenant_display_name',
              'create_iam_user_s3client', 'iam_root', 'Policy', 'Statement', 'make_json_policy', 'get_cloud_storage_class',
              'get_cloud_retain_head_object', 'get_cloud_regular_storage_class', 'get_cloud_target_path', 'get_cloud_target_storage_class',
              'get_lc_debug_interval', 'get_sts_user_id', 'get_parameter_name', 'get_cloud_config'):
    globals()[_name] = _not_served
