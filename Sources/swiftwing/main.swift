print("swiftwing")
