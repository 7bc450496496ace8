"""Runs the ported ceph/s3-tests cases (cases.txt) against a lading S3 listener, each on its own
with a time bound, and prints one JSON object: the cases that passed, and for each other one
the first line of why it failed. Exits 0 whatever the count (the test file judges it)."""
import json
import os
import signal
import sys
import traceback

sys.path.insert(0, os.path.dirname(__file__))
import s3tests_port  # noqa: E402
from s3tests_shim import Skipped  # noqa: E402


class TimedOut(Exception):
    pass


def on_alarm(signum, frame):
    raise TimedOut('took longer than 60 s')


signal.signal(signal.SIGALRM, on_alarm)
cases = [c.strip() for c in open(os.path.join(os.path.dirname(__file__), 'cases.txt')) if c.strip()]
only = os.environ.get('ONLY')
passed, failed, skipped = [], {}, {}
for name in cases:
    if only and only not in name:
        continue
    fn = getattr(s3tests_port, name)
    signal.alarm(60)
    try:
        if fn.__code__.co_argcount > 0:
            raise Skipped('parametrised by pytest fixtures')
        fn()
        passed.append(name)
    except Skipped as e:
        skipped[name] = str(e)
    except Exception as e:  # noqa: BLE001
        tb = traceback.extract_tb(e.__traceback__)
        where = tb[-1].line if tb else ''
        failed[name] = ('%s: %s' % (type(e).__name__, str(e).splitlines()[0] if str(e) else '') + ' | at: ' + (where or '')).strip()
    finally:
        signal.alarm(0)
print(json.dumps({'passed': passed, 'failed': failed, 'skipped': skipped}))
