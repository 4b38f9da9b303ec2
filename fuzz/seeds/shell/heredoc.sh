cat > src/app.py <<'PY'
def f():
    return 1
PY
sed -i 's/a/b/g' src/app.py && python -m pytest tests/ -x -q 2>&1 | tail -5
