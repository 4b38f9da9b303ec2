cp a.py.bak a.py; mv x y; rm -rf build/ && tee -a log.txt < in | perl -pi -e 's/x/y/' f.c; patch -p1 < d.diff; pip install -e .; (cd sub && make test) > /tmp/out 2>&1 &
for f in *.py; do echo "$f" >| "$f.orig"; done; git reset --hard HEAD~1; tox -e py311; sed --in-place=.bak -e '1d' conf.ini
