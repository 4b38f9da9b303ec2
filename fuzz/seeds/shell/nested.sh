cd /repo && bash -c "echo 'x' >> notes.txt; git apply fix.patch" && git stash && git checkout -- setup.py
