# encrypt.py PROFILE_URL IN OUT FILTER PASSWORD
#
# Opens IN in a private headless LibreOffice and stores it as OUT with
# FILTER under PASSWORD, as "Save with password" does: ODF filters take the
# Password property; the OOXML filters want EncryptionData (OOXPassword),
# which writes the OLE container with EncryptionInfo that Word writes.
# soffice --convert-to has no way to set a password, hence Python-UNO.
# Run with a python3 that has the uno module (Debian: python3-uno).
import os
import signal
import subprocess
import sys
import time

import uno
from com.sun.star.beans import NamedValue, PropertyValue


def prop(name, value):
    p = PropertyValue()
    p.Name, p.Value = name, value
    return p


def named(name, value):
    v = NamedValue()
    v.Name, v.Value = name, value
    return v


profile, src, dst, flt, password = sys.argv[1:6]
pipe = "docgraph-encrypt-%d" % os.getpid()
soffice = subprocess.Popen(
    ["soffice", "-env:UserInstallation=" + profile, "--headless", "--invisible", "--norestore",
     "--accept=pipe,name=%s;urp;" % pipe],
    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
try:
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext("com.sun.star.bridge.UnoUrlResolver", local)
    for _ in range(600):
        try:
            ctx = resolver.resolve("uno:pipe,name=%s;urp;StarOffice.ComponentContext" % pipe)
            break
        except Exception:
            time.sleep(0.1)
    else:
        sys.exit("soffice did not answer on its pipe")
    desktop = ctx.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", ctx)
    doc = desktop.loadComponentFromURL(uno.systemPathToFileUrl(os.path.abspath(src)), "_blank", 0,
                                       (prop("Hidden", True),))
    if flt in ("writer8", "impress8"):
        props = (prop("FilterName", flt), prop("Password", password))
    else:
        data = uno.Any("[]com.sun.star.beans.NamedValue",
                       (named("OOXPassword", password), named("CryptoType", "Standard")))
        props = (prop("FilterName", flt), prop("EncryptionData", data))
    uno.invoke(doc, "storeToURL", (uno.systemPathToFileUrl(os.path.abspath(dst)),
                                   uno.Any("[]com.sun.star.beans.PropertyValue", props)))
    doc.close(True)
    try:
        desktop.terminate()
    except Exception:
        pass  # the bridge goes down with soffice
finally:
    try:
        soffice.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(soffice.pid, signal.SIGKILL)
