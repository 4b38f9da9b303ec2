import os, shutil
from pathlib import Path
p = Path("src") / "mod.py"
target = Path('out.txt')
target.write_text("x")
with open("a.txt", "w") as f:
    f.write("y")
os.remove('old.py'); os.rename("a", "b"); shutil.copy("x", "y"); shutil.rmtree('build')
fd = os.open("f", os.O_WRONLY | os.O_CREAT)
import fileinput
for line in fileinput.input("c.py", inplace=True):
    print(line.replace("a", "b"), end="")
Path(f"{x}.py").touch()
q = Path('''tri.py''')
q.open('a').write('z')
