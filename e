/dev/fd/3: line 271: : command not found
