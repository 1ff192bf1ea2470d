import sys
exec(open(__import__('os').path.join(__import__('os').path.dirname(__file__), 'dump_uops.py')).read().split("exec(open")[0])
sys.argv = [sys.argv[1]] + sys.argv[2:]
exec(open(sys.argv[0]).read(), {"__name__": "__main__"})
